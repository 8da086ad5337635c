// The tolerant JSON tree behind hover, completion and body checks: what is at an offset while a
// document is being typed, and that no text makes it (or the checks on it) throw.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { checkBody } from "../../../src/core/analysis/body-check";
import { type JsonNode, locate, parseJsonTree } from "../../../src/core/analysis/json-tree";
import { EverythingSchema } from "../../../src/gen/demo/v1/types_pb";

describe("json tree", () => {
  it("locates keys and values, complete or being typed", () => {
    const text = '{"a": {"b": [1, "x"]}, "c": ';
    const tree = parseJsonTree(text);
    assert.deepEqual(pick(locate(tree, text.indexOf('"b"') + 1)), { path: ["a"], role: "key", key: "b" });
    assert.deepEqual(pick(locate(tree, text.indexOf('"x"') + 1)), {
      path: ["a", "b"],
      role: "value",
      key: 1,
    });
    assert.deepEqual(pick(locate(tree, text.length)), { path: [], role: "value", key: "c" });
    const typing = '{"a": 1, "na';
    assert.deepEqual(pick(locate(parseJsonTree(typing), typing.length)), {
      path: [],
      role: "key",
      key: "na",
    });
    const between = '{"a": 1, }';
    assert.deepEqual(pick(locate(parseJsonTree(between), 9)), { path: [], role: "key", key: undefined });
    const extension = parseJsonTree('{"[pkg.ext]": 1, "text": "x"}');
    assert.deepEqual(
      checkBody(extension as JsonNode, EverythingSchema),
      [],
      "extension keys are left to the call",
    );
    const template = '{"a": {{value}}, "b": "{{x}}"}';
    const t = parseJsonTree(template);
    assert.equal(t?.kind === "object" && t.members[0].value?.kind, "template");
    assert.deepEqual(checkBody(t as JsonNode, EverythingSchema), [
      {
        start: 1,
        end: 4,
        message:
          'unknown field "a" in message demo.v1.Everything; its fields: ' +
          EverythingSchema.fields.map((f) => f.jsonName).join(", "),
        severity: "error",
      },
      {
        start: 17,
        end: 20,
        message: `unknown field "b" in message demo.v1.Everything; its fields: ${EverythingSchema.fields.map((f) => f.jsonName).join(", ")}`,
        severity: "error",
      },
    ]);
  });

  it("never throws, whatever the text (fuzz, 30,000 inputs)", () => {
    const pieces = [
      "{",
      "}",
      "[",
      "]",
      ":",
      ",",
      '"',
      "\\",
      "{{",
      "}}",
      " ",
      "\n",
      '"text"',
      '"color"',
      '"COLOR_RED"',
      '"nested"',
      '"byId"',
      '"5"',
      '"items"',
      '"counts"',
      "true",
      "null",
      "-",
      "1e5",
      "0.5",
      "x",
      '"\\u12',
      '"createdAt"',
      '"ttl"',
      '"1s"',
      '"flag"',
      '"int64Value"',
    ];
    let seed = 42;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    for (let i = 0; i < 30_000; i++) {
      let text = "";
      const length = 1 + random(24);
      for (let j = 0; j < length; j++) text += pieces[random(pieces.length)];
      const tree = parseJsonTree(text);
      if (!tree) continue;
      assert.ok(tree.start >= 0 && tree.end <= text.length);
      for (let offset = 0; offset <= text.length; offset += 1 + random(3)) locate(tree, offset);
      checkBody(tree, EverythingSchema);
    }
    // Very deep nesting stops at a bound instead of overflowing the stack.
    const deep = "[".repeat(100_000);
    assert.ok(parseJsonTree(`{"a": ${deep}`));
  });
});

function pick(l: ReturnType<typeof locate>) {
  return l && { path: l.path, role: l.role, key: l.key };
}
