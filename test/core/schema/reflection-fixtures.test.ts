// The schema fixtures (proto2, proto3, editions 2023, custom options) served by our reflection server
// and read back by the reflection client: every file kind links, and what it means survives — editions
// features (presence, delimited encoding, closed enums), proto2 defaults and extensions, maps.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  createFileRegistry,
  type DescField,
  type DescMessage,
  type FileRegistry,
  fromBinary,
  fromJson,
  getOption,
  type Message,
  toBinary,
  toJson,
} from "@bufbuild/protobuf";
import { createReflectionSource, type ReflectionSource } from "../../../src/core/schema/reflection-client";
import { registerReflection } from "../../../src/core/schema/reflection-server";
import { buildSchemaFixtures } from "../../support/schema-fixtures";
import { protocols, startServer, type TestServer, transportFor } from "./reflection-test-kit";

let registry: FileRegistry;
let server: TestServer;
before(async () => {
  registry = createFileRegistry((await buildSchemaFixtures()).set);
  server = await startServer((r) => registerReflection(r, registry));
});
after(() => server?.close());

async function withSource(protocol: (typeof protocols)[number], fn: (s: ReflectionSource) => Promise<void>) {
  const source = createReflectionSource({
    transport: transportFor(protocol, server.baseUrl),
    timeoutMs: 5000,
  });
  try {
    await fn(source);
  } finally {
    await source.close();
  }
}

async function message(source: ReflectionSource, name: string): Promise<DescMessage> {
  const found = await source.findType(name);
  assert.equal(found?.kind, "message", name);
  return found as DescMessage;
}

const delimited = (f: DescField) => (f.fieldKind === "message" ? f.delimitedEncoding : undefined);
const packed = (f: DescField) => (f.fieldKind === "list" ? f.packed : undefined);
const defaultOf = (f: DescField) => (f.fieldKind === "scalar" ? f.getDefaultValue() : undefined);

describe("the schema fixtures over reflection", () => {
  for (const protocol of protocols) {
    test(`${protocol}: every service of every file kind resolves`, async () => {
      await withSource(protocol, async (source) => {
        const services = await source.listServices();
        for (const name of [
          "fixtures.editions.Configurator",
          "fixtures.options.AnnotatedService",
          "fixtures.v1.Greeter",
        ]) {
          assert.ok(services.includes(name), name);
          const service = await source.findType(name);
          assert.equal(service?.kind, "service", name);
        }
      });
    });
  }

  test("editions 2023: presence, delimited encoding and closed enums survive", async () => {
    await withSource("grpc", async (source) => {
      const settings = await message(source, "fixtures.editions.Settings");
      const byName = Object.fromEntries(settings.fields.map((f) => [f.name, f]));
      // LEGACY_REQUIRED is presence 3, EXPLICIT 1, IMPLICIT 2 (FeatureSet.FieldPresence).
      assert.equal(byName.id.presence, 3);
      assert.equal(byName.name.presence, 1);
      assert.equal(byName.mode.presence, 2);
      assert.equal(delimited(byName.child), true);
      assert.equal(packed(byName.values), false);
      assert.equal(packed(byName.packed_values), true);
      assert.equal(byName.strict.enum?.open, false);
      assert.equal(byName.mode.enum?.open, true);
      const value = fromJson(settings, { name: "n", id: 7, values: [1, 2], child: { value: "c" } });
      const bytes = toBinary(settings, value);
      // Field 4 delimited: a start-group tag (4 << 3 | 3 = 0x23), not a length-delimited one (0x22).
      assert.ok(bytes.includes(0x23) && !bytes.includes(0x22), Buffer.from(bytes).toString("hex"));
      assert.deepEqual(toJson(settings, fromBinary(settings, bytes)), {
        name: "n",
        id: 7,
        values: [1, 2],
        child: { value: "c" },
      });
    });
  });

  test("proto2: defaults, groups, nested and top-level extensions", async () => {
    await withSource("connect", async (source) => {
      const legacy = await message(source, "fixtures.proto2.Legacy");
      assert.equal(defaultOf(legacy.field.count), 42);
      assert.equal(defaultOf(legacy.field.label), "none");
      assert.equal(defaultOf(legacy.field.score), Number.NEGATIVE_INFINITY);
      assert.equal(delimited(legacy.field.extra), true);
      assert.equal(
        (await source.findExtension("fixtures.proto2.Legacy", 100))?.typeName,
        "fixtures.proto2.priority",
      );
      assert.equal(
        (await source.findExtension("fixtures.proto2.Legacy", 150))?.typeName,
        "fixtures.proto2.Legacy.nested_ext",
      );
      assert.equal(await source.findExtension("fixtures.proto2.Legacy", 199), undefined);
    });
  });

  test("proto3: maps, optional fields and custom options", async () => {
    await withSource("grpcweb", async (source) => {
      const request = await message(source, "fixtures.v1.GreetRequest");
      assert.equal(request.field.labels.fieldKind, "map");
      assert.equal(request.field.times.proto.proto3Optional, true);
      assert.deepEqual(
        request.oneofs.map((o) => o.name),
        ["address"],
        "the synthetic oneof of an optional field is not a real oneof",
      );
      const value = fromJson(request, { labels: { a: "b" }, times: 0, shownAs: "x" });
      assert.deepEqual(toJson(request, fromBinary(request, toBinary(request, value))), {
        labels: { a: "b" },
        times: 0,
        shownAs: "x",
      });
      const annotated = await message(source, "fixtures.options.Annotated");
      const rule = await source.findExtension("google.protobuf.MessageOptions", 50002);
      assert.ok(rule?.kind === "extension");
      // Read through the extension the client resolved, as hover and validation do.
      const option = getOption(annotated as never, rule) as Message;
      assert.deepEqual(toJson(rule.message as DescMessage, option), {
        name: "annotated",
        level: 3,
        severity: "SEVERITY_HIGH",
        tags: ["a", "b"],
        limit: { max: "9000000000", min: 1 },
        strict: true,
      });
    });
  });
});
