import assert from "node:assert/strict";
import { before, describe, test } from "node:test";
import type { DescMessage, FileRegistry } from "@bufbuild/protobuf";
import {
  fieldByJsonKey,
  findUnknownKey,
  resolveJsonPath,
  unknownFieldText,
} from "../../../src/core/schema/json-path";
import { fullNameOf } from "../../../src/core/schema/lookup";
import { schemaFixturesRegistry } from "../../support/schema-fixtures";

let registry: FileRegistry;
let request: DescMessage;
let response: DescMessage;
before(async () => {
  registry = await schemaFixturesRegistry();
  request = registry.getMessage("fixtures.v1.GreetRequest")!;
  response = registry.getMessage("fixtures.v1.GreetResponse")!;
});

function target(root: DescMessage, path: (string | number)[]) {
  const r = resolveJsonPath(root, path, registry);
  return { field: r?.field && fullNameOf(r.field), message: r?.message?.typeName, found: r !== undefined };
}

describe("resolveJsonPath", () => {
  test("the empty path is the root message", () => {
    assert.deepEqual(target(request, []), {
      field: undefined,
      message: "fixtures.v1.GreetRequest",
      found: true,
    });
  });

  test("keys by JSON name or proto name", () => {
    assert.equal(target(request, ["shownAs"]).field, "fixtures.v1.GreetRequest.display_name");
    assert.equal(target(request, ["display_name"]).field, "fixtures.v1.GreetRequest.display_name");
    assert.equal(target(request, ["oldName"]).field, "fixtures.v1.GreetRequest.old_name");
    assert.equal(target(request, ["nope"]).found, false);
  });

  test("into nested messages, oneof members, map values and list elements", () => {
    assert.deepEqual(target(request, ["postal"]), {
      field: "fixtures.v1.GreetRequest.postal",
      message: "fixtures.v1.GreetRequest.Postal",
      found: true,
    });
    assert.equal(target(request, ["postal", "city"]).field, "fixtures.v1.GreetRequest.Postal.city");
    assert.deepEqual(target(request, ["postals", "5"]), {
      field: "fixtures.v1.GreetRequest.postals",
      message: "fixtures.v1.GreetRequest.Postal",
      found: true,
    });
    assert.equal(
      target(request, ["postals", "5", "country"]).field,
      "fixtures.v1.GreetRequest.Postal.country",
    );
    assert.equal(
      target(response, ["tree", "children", 0, "named", "k", "left", "value"]).field,
      "fixtures.v1.Node.value",
    );
    assert.equal(target(request, ["numbers", 0]).field, "fixtures.v1.GreetRequest.numbers");
    assert.equal(target(request, ["numbers", "x"]).found, false);
    assert.equal(target(request, ["name", "x"]).found, false, "a scalar has no keys");
  });

  test("well-known types with a JSON form of their own are leaves", () => {
    assert.deepEqual(target(response, ["sentAt"]), {
      field: "fixtures.v1.GreetResponse.sent_at",
      message: undefined,
      found: true,
    });
    assert.equal(target(response, ["sentAt", "seconds"]).found, false);
    assert.equal(target(response, ["meta", "anything"]).found, false);
    assert.equal(target(response, ["nothing"]).message, "google.protobuf.Empty");
  });

  test("extensions by [full.name] on the message they extend", () => {
    const legacy = registry.getMessage("fixtures.proto2.Legacy")!;
    assert.equal(fieldByJsonKey(legacy, "[fixtures.proto2.priority]", registry)?.number, 100);
    assert.equal(
      target(legacy, ["[fixtures.proto2.inner_ext]", "depth"]).field,
      "fixtures.proto2.Legacy.Inner.depth",
    );
    assert.equal(fieldByJsonKey(legacy, "[fixtures.proto2.priority]"), undefined, "needs the registry");
    assert.equal(
      fieldByJsonKey(request, "[fixtures.proto2.priority]", registry),
      undefined,
      "wrong extendee",
    );
  });
});

describe("findUnknownKey and unknownFieldText", () => {
  test("the first unknown key, in nested messages, map values and list elements", () => {
    const found = (value: unknown) => {
      const u = findUnknownKey(request, value);
      return u && `${u.message.typeName}.${u.key}`;
    };
    assert.equal(found({ shownAs: "a", postal: { city: "b" } }), undefined);
    assert.equal(found({ nam: "a" }), "fixtures.v1.GreetRequest.nam");
    assert.equal(found({ postal: { cty: "b" } }), "fixtures.v1.GreetRequest.Postal.cty");
    assert.equal(
      found({ postals: { "5": { city: "x", contry: "y" } } }),
      "fixtures.v1.GreetRequest.Postal.contry",
    );
    const list = findUnknownKey(response, { tree: { children: [{ named: { k: { vlue: 1 } } }] } });
    assert.equal(list?.key, "vlue");
  });

  test("names the message, the field meant and the fields there are", () => {
    const postal = registry.getMessage("fixtures.v1.GreetRequest.Postal")!;
    assert.match(
      unknownFieldText(postal, "cty"),
      /^unknown field "cty" in message fixtures\.v1\.GreetRequest\.Postal \(did you mean "city"\?\); its fields: .*city/,
    );
    assert.doesNotMatch(unknownFieldText(postal, "zzzzzzzz"), /did you mean/);
  });
});
