import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { DescFile } from "@bufbuild/protobuf";
import type { ConnectRouter } from "@connectrpc/connect";
import {
  type DescriptorSetSource,
  openDescriptorSetBytes,
} from "../../../src/core/schema/descriptor-set-source";
import { renderDocs } from "../../../src/core/schema/docs";
import { fullNameOf } from "../../../src/core/schema/lookup";
import { createReflectionSource } from "../../../src/core/schema/reflection-client";
import { registerReflection } from "../../../src/core/schema/reflection-server";
import { lookupInSource, lookupInSources } from "../../../src/core/schema/source-lookup";
import type { FileSource } from "../../../src/core/schema/types";
import { createWellKnownSource } from "../../../src/core/schema/wkt-source";
import { buildSchemaFixtures } from "../../support/schema-fixtures";
import { startServer, type TestServer, transportFor } from "./reflection-test-kit";

let source: DescriptorSetSource;
before(async () => {
  source = openDescriptorSetBytes((await buildSchemaFixtures()).bytes, "fixtures");
});
after(() => source.close());

async function find(name: string, from: FileSource = source) {
  const found = await lookupInSource(from, name);
  assert.ok(found, `${name} should be found`);
  return found;
}

const parentNames = (r: { parents: readonly Parameters<typeof fullNameOf>[0][] }) =>
  r.parents.map(fullNameOf);

describe("lookupInSource over a lazily decoded descriptor set", () => {
  test("every kind of element, with parents, file, location and comments", async () => {
    const cases: [string, string, string[], string][] = [
      ["fixtures.v1.Greeter", "service", [], "Greeter greets people"],
      ["fixtures.v1.Greeter.Greet", "method", ["fixtures.v1.Greeter"], "Greet says hello once"],
      ["fixtures.v1.GreetRequest", "message", [], "GreetRequest says who to greet"],
      ["fixtures.v1.GreetRequest.name", "field", ["fixtures.v1.GreetRequest"], "The name of the person"],
      ["fixtures.v1.GreetRequest.address", "oneof", ["fixtures.v1.GreetRequest"], "Exactly one way"],
      ["fixtures.v1.GreetRequest.Postal", "message", ["fixtures.v1.GreetRequest"], "A postal address"],
      [
        "fixtures.v1.GreetRequest.Postal.Country",
        "enum",
        ["fixtures.v1.GreetRequest", "fixtures.v1.GreetRequest.Postal"],
        "Countries",
      ],
      ["fixtures.v1.Language", "enum", [], "Language is a language"],
      ["fixtures.v1.Language.LANGUAGE_EN", "enum_value", ["fixtures.v1.Language"], "English"],
      ["fixtures.proto2.priority", "extension", [], "How urgent the record is"],
      [
        "fixtures.proto2.Legacy.nested_ext",
        "extension",
        ["fixtures.proto2.Legacy"],
        "inside a message scope",
      ],
    ];
    for (const [name, kind, parents, comment] of cases) {
      const found = await find(name);
      assert.equal(found.kind, kind, name);
      assert.equal(found.fullName, name);
      assert.deepEqual(parentNames(found), parents, name);
      assert.match(found.file.proto.name, /^fixtures\//, name);
      assert.ok(found.location, `${name} has a location`);
      assert.ok(found.location.startLine > 0, name);
      assert.ok(found.comments?.leading?.includes(comment), `${name}: ${JSON.stringify(found.comments)}`);
      assert.equal(found.source, "fixtures");
    }
    // A leading dot and an enum value in the scope of its message.
    assert.equal((await find(".fixtures.v1.GreetRequest.token")).fullName, "fixtures.v1.GreetRequest.token");
    assert.equal((await find("fixtures.v1.GreetRequest.Postal.COUNTRY_NL")).kind, "enum_value");
  });

  test("names the source does not define are undefined", async () => {
    for (const name of [
      "",
      "fixtures",
      "fixtures.v1.Nope",
      "fixtures.v1.GreetRequest.nope",
      "fixtures.v1.Greeter.Nope",
      "nowhere.At.all",
    ]) {
      assert.equal(await lookupInSource(source, name), undefined, name);
    }
  });

  test("its registry renders custom options by name, options on the options' messages too", async () => {
    const method = await find("fixtures.options.AnnotatedService.Do");
    const docs = renderDocs(method, { registry: method.registry });
    assert.ok(
      docs.markdown.includes(
        '(fixtures.options.method_rule) = { name: "do", severity: SEVERITY_LOW, limit: { max: -1 } }',
      ),
      docs.markdown,
    );
    assert.deepEqual(docs.comments, ["An annotated method."]);
    const ruleName = await find("fixtures.options.Rule.name");
    assert.deepEqual(
      renderDocs(ruleName, { registry: ruleName.registry }).options.map((o) => `${o.name} = ${o.value}`),
      ['(fixtures.options.field_note) = "rule name"'],
    );
  });
});

describe("lookupInSources", () => {
  test("the first source that defines the name wins; the well-known types answer too", async () => {
    const wkt = createWellKnownSource();
    const seconds = await lookupInSources([source, wkt], "google.protobuf.Duration.seconds");
    assert.equal(seconds?.kind, "field");
    const greet = await lookupInSources([wkt, source], "fixtures.v1.Greeter.Greet");
    assert.equal(greet?.source, "fixtures");
    assert.equal(await lookupInSources([wkt, source], "fixtures.v1.Nope"), undefined);
  });

  test("over server reflection: fields and enum values of reflected files", async () => {
    const files: DescFile[] = [];
    for (const name of ["fixtures.v1.Greeter", "fixtures.options.AnnotatedService"]) {
      const file = await source.findFile(name);
      assert.ok(file);
      files.push(file);
    }
    let server: TestServer | undefined;
    const reflection = { current: undefined as FileSource | undefined };
    try {
      server = await startServer((router: ConnectRouter) => registerReflection(router, files));
      reflection.current = createReflectionSource({
        transport: transportFor("grpc", server.baseUrl),
        label: "reflection",
        timeoutMs: 5000,
      });
      const field = await find("fixtures.v1.GreetRequest.Postal.city", reflection.current);
      assert.equal(field.kind, "field");
      assert.equal(field.source, "reflection");
      assert.deepEqual(parentNames(field), ["fixtures.v1.GreetRequest", "fixtures.v1.GreetRequest.Postal"]);
      const value = await find("fixtures.options.Kind.KIND_SPECIAL", reflection.current);
      assert.deepEqual(
        renderDocs(value, { registry: value.registry }).options.map((o) => `${o.name} = ${o.value}`),
        ["deprecated = true", '(fixtures.options.value_label) = "special"'],
      );
      assert.equal(await lookupInSource(reflection.current, "fixtures.v1.GreetRequest.nope"), undefined);
    } finally {
      await reflection.current?.close();
      await server?.close();
    }
  });
});
