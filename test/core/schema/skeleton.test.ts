import assert from "node:assert/strict";
import { before, describe, test } from "node:test";
import { type FileRegistry, fromJson, toJson } from "@bufbuild/protobuf";
import { fieldSkeleton, messageSkeleton } from "../../../src/core/schema/skeleton";
import { schemaFixturesRegistry } from "../../support/schema-fixtures";

let registry: FileRegistry;
before(async () => {
  registry = await schemaFixturesRegistry();
});

function skeletonOf(name: string, options?: { maxDepth?: number; maxRecursion?: number }) {
  const desc = registry.getMessage(name);
  assert.ok(desc, name);
  return messageSkeleton(desc, options);
}

describe("messageSkeleton", () => {
  test("scalars, enums, maps, lists, JSON names and the first member of a oneof", () => {
    assert.deepEqual(skeletonOf("fixtures.v1.GreetRequest"), {
      name: "",
      times: 0,
      language: "LANGUAGE_UNSPECIFIED",
      email: "",
      token: "",
      oldName: "",
      shownAs: "",
      labels: { "": "" },
      postals: { "0": { street: "", city: "", country: "COUNTRY_UNSPECIFIED" } },
      numbers: [0],
      unpacked: [0],
      languages: ["LANGUAGE_UNSPECIFIED"],
    });
  });

  test("well-known types in their JSON forms, 64-bit numbers as strings", () => {
    const s = skeletonOf("fixtures.v1.GreetResponse") as Record<string, unknown>;
    assert.deepEqual(
      {
        sentAt: s.sentAt,
        took: s.took,
        id: s.id,
        delta: s.delta,
        hash: s.hash,
        payload: s.payload,
        ratio: s.ratio,
        ok: s.ok,
        meta: s.meta,
        extra: s.extra,
        list: s.list,
        detail: s.detail,
        mask: s.mask,
        nickname: s.nickname,
        big: s.big,
        flag: s.flag,
        raw: s.raw,
        precise: s.precise,
        small: s.small,
        nothing: s.nothing,
        nullValue: s.nullValue,
        history: s.history,
        attributes: s.attributes,
        byFlag: s.byFlag,
        count64: s.count64,
      },
      {
        sentAt: "1970-01-01T00:00:00Z",
        took: "0s",
        id: "0",
        delta: "0",
        hash: "0",
        payload: "",
        ratio: 0,
        ok: false,
        meta: {},
        extra: null,
        list: [],
        detail: {},
        mask: "",
        nickname: "",
        big: "0",
        flag: false,
        raw: "",
        precise: 0,
        small: 0,
        nothing: {},
        nullValue: null,
        history: ["1970-01-01T00:00:00Z"],
        attributes: { "": null },
        byFlag: { false: "LANGUAGE_UNSPECIFIED" },
        count64: "0",
      },
    );
  });

  test("a recursive message is written once, then as empty values", () => {
    assert.deepEqual(skeletonOf("fixtures.v1.Node"), {
      value: "",
      left: {},
      right: {},
      children: [],
      named: {},
    });
    assert.deepEqual(skeletonOf("fixtures.proto2.Tree"), { name: "", children: [], parent: {} });
  });

  test("maxDepth bounds the expansion, maxRecursion lets recursive types nest", () => {
    const deep = skeletonOf("fixtures.v1.Node", { maxDepth: 2, maxRecursion: 100 }) as Record<
      string,
      unknown
    >;
    const level1 = deep.left as Record<string, unknown>;
    const level2 = level1.left as Record<string, unknown>;
    assert.equal(level1.value, "");
    assert.equal(level2.value, "");
    assert.deepEqual(level2.left, {}, "level 3 is past the limit");
    assert.deepEqual(level2.children, []);
    assert.deepEqual(skeletonOf("fixtures.v1.GreetRequest", { maxDepth: 0 }), {
      ...(skeletonOf("fixtures.v1.GreetRequest") as object),
      postals: {},
    });
  });

  test("proto2 groups, required fields and editions delimited fields", () => {
    const legacy = skeletonOf("fixtures.proto2.Legacy") as Record<string, unknown>;
    assert.equal(legacy.id, "");
    assert.deepEqual(legacy.extra, { note: "" });
    assert.deepEqual(legacy.inner, { depth: 0, kind: "KIND_UNSPECIFIED" });
    assert.equal(legacy.color, "RED");
    const settings = skeletonOf("fixtures.editions.Settings") as Record<string, unknown>;
    assert.deepEqual(settings.child, { value: "" });
    assert.equal(settings.strict, "STRICT_ONE");
  });

  test("fieldSkeleton gives the value of one field", () => {
    const request = registry.getMessage("fixtures.v1.GreetRequest")!;
    assert.deepEqual(fieldSkeleton(request.field.postals), {
      "0": { street: "", city: "", country: "COUNTRY_UNSPECIFIED" },
    });
    assert.deepEqual(fieldSkeleton(request.field.languages), ["LANGUAGE_UNSPECIFIED"]);
    const node = registry.getMessage("fixtures.v1.Node")!;
    assert.deepEqual(fieldSkeleton(node.field.left), {});
  });

  test("every message in the fixtures round-trips through fromJson", () => {
    let count = 0;
    for (const type of registry) {
      if (type.kind !== "message") continue;
      for (const options of [undefined, { maxDepth: 1 }, { maxDepth: 3, maxRecursion: 2 }]) {
        const skeleton = messageSkeleton(type, options);
        const message = fromJson(type, skeleton, { registry });
        // Writing it back gives valid JSON for the same type again.
        fromJson(type, toJson(type, message, { registry }), { registry });
      }
      count++;
    }
    assert.ok(count > 40, `checked ${count} messages`);
  });
});
