import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { createRegistry, type DescMessage, type DescMethod } from "@bufbuild/protobuf";
import { parseRpcFile, splitLines } from "../../../src/core/rpcfile/parse";
import {
  checkAssertionValue,
  describeShape,
  resolveResponsePath,
  type SchemaProblem,
} from "../../../src/core/rpcfile/response-path";
import type { Range } from "../../../src/core/rpcfile/types";
import { DemoService } from "../../../src/gen/demo/v1/demo_pb";
import { GreetService } from "../../../src/gen/demo/v1/greet_pb";
import { file_google_rpc_error_details } from "../../../src/gen/google/rpc/error_details_pb";

const echo: DescMethod = DemoService.method.echo;
const count: DescMethod = DemoService.method.count;
const registry = createRegistry(file_google_rpc_error_details);
const detailType = (name: string) => registry.getMessage(name) as DescMessage | undefined;

function parsed(line: string) {
  const text = `# @${line}\nhttp://h/a.B/C\n`;
  const file = parseRpcFile(text);
  assert.deepEqual(
    file.diagnostics.map((d) => d.message),
    [],
  );
  const r = file.requests[0];
  return { text, assertion: r.assertions[0], capture: r.captures[0] };
}

function covers(text: string, r: Range): string {
  return splitLines(text)[r.start.line].slice(r.start.character, r.end.character);
}

/** Problems of one assertion on a method: the path's, else the value's. */
function problems(
  line: string,
  method = echo,
): { message: string; covers: string; code: string; replacement?: string; severity: string }[] {
  const { text, assertion } = parsed(`assert ${line}`);
  const r = resolveResponsePath(assertion.path, method, detailType);
  const list: SchemaProblem[] = r.problem ? [r.problem] : checkAssertionValue(assertion, r);
  return list.map((p) => ({
    message: p.message,
    covers: covers(text, p.range),
    code: p.code,
    severity: p.severity,
    ...(p.replacement !== undefined ? { replacement: p.replacement } : {}),
  }));
}

function fine(line: string, method = echo): void {
  assert.deepEqual(problems(line, method), [], line);
}

describe("resolveResponsePath", () => {
  test("follows fields by JSON name through messages, lists, maps and well-known types", () => {
    const { assertion } = parsed("assert messages[0].items[*].child.values[-1] exists");
    const r = resolveResponsePath(assertion.path, echo, detailType);
    assert.equal(r.problem, undefined);
    assert.equal(r.projected, true);
    assert.deepEqual(
      r.steps.map((s) => [s.field?.name, describeShape(s.shape)]),
      [
        [undefined, "a message demo.v1.Everything"],
        ["items", "a list (repeated demo.v1.Everything.Nested)"],
        [undefined, "a message demo.v1.Everything.Nested"],
        ["child", "a message demo.v1.Everything.Nested"],
        ["values", "a list (repeated int32)"],
        [undefined, "an int32"],
      ],
    );
    for (const path of [
      "message.customJsonName",
      "message.byId[5].name",
      'message.counts["a"]',
      "message.createdAt.length",
      "message.attributes.anything.goes[3]",
      "message.value[0].x",
      "message.extra.foo",
      "message.list[0].x",
      "message.wrappedInt64",
      "message.tags.length",
      "messages.length",
      'message["[acme.ext]"].x',
      "error.details[0].anything",
      "error.details.length",
      "error.details[google.rpc.BadRequest].fieldViolations[0].field",
      'error.details[google.rpc.ErrorInfo]["@type"]',
      'headers["x-anything"].length',
    ]) {
      const r = resolveResponsePath(parsed(`assert ${path} exists`).assertion.path, echo, detailType);
      assert.equal(r.problem, undefined, `${path}: ${r.problem?.message}`);
    }
  });

  test("unknown fields suggest the closest, proto names point to the JSON name, both with a fix", () => {
    assert.deepEqual(problems("message.txt exists"), [
      {
        message:
          'unknown field "txt" in message demo.v1.Everything (did you mean "text"?); its fields: text, flag, int32Value, int64Value, uint64Value, sint32Value, sint64Value, uint32Value, fixed32Value, fixed64Value, sfixed32Value, sfixed64Value, doubleValue, floatValue, data, color, size, nested, tags, items, colors, numbers, counts, byId, colorByName, choiceText, choiceNumber, choiceNested, maybeText, maybeNumber, createdAt, ttl, attributes, value, list, extra, wrappedText, wrappedInt64, wrappedBool, wrappedDouble, wrappedBytes, mask, nothing, legacyName, lateField, customJsonName',
        covers: "txt",
        code: "unknown-field",
        severity: "error",
        replacement: "text",
      },
    ]);
    assert.deepEqual(problems("messages[0].int64_value == 1"), [
      {
        message: "responses name field demo.v1.Everything.int64_value by its JSON name: write int64Value",
        covers: "int64_value",
        code: "json-name",
        severity: "error",
        replacement: "int64Value",
      },
    ]);
    assert.equal(problems('message["json_named"] exists')[0].replacement, '"customJsonName"');
    assert.equal(problems("message.nested.nmae exists")[0].replacement, "name");
    assert.equal(problems("message.zzzzzz exists")[0].replacement, undefined);
    assert.deepEqual(
      problems('error.details[google.rpc.BadRequest].fieldViolation[0].field == "x"')[0].replacement,
      "fieldViolations",
    );
  });

  test("wrong kinds of steps: members of lists, elements of messages, members of scalars", () => {
    assert.deepEqual(problems('messages.text == "x"'), [
      {
        message:
          "messages is a list of demo.v1.Everything: pick an element first, as in messages[0].text, messages[-1].text (the last) or messages[*].text (each)",
        covers: ".text",
        code: "not-an-object",
        severity: "error",
        replacement: "[0].text",
      },
    ]);
    assert.equal(
      problems("message[0] exists")[0].message,
      "message is a message demo.v1.Everything (a JSON object): name a field with .name",
    );
    assert.equal(
      problems("message.text.x exists")[0].message,
      'message.text is a string: it has no member "x" (.length is its length)',
    );
    assert.equal(
      problems("message.flag.length exists")[0].message,
      'message.flag is a bool: it has no member "length"',
    );
    assert.equal(
      problems("message.nested.length exists")[0].message,
      'message.nested is a message demo.v1.Everything.Nested, which has no field "length" (.length counts the elements of a list or the characters of a string)',
    );
    assert.equal(
      problems("message.counts[*] exists")[0].message,
      'message.counts is a map (map<string, int64>) (a JSON object): look values up by key, as in message.counts["key"]',
    );
  });

  test("error detail types: the standard ones are known; unknown ones are warnings with a suggestion", () => {
    assert.deepEqual(problems("error.details[google.rpc.BadReqest] exists"), [
      {
        message:
          "error detail type google.rpc.BadReqest is not in the schema (did you mean google.rpc.BadRequest?)",
        covers: "google.rpc.BadReqest",
        code: "unknown-detail-type",
        severity: "warning",
        replacement: "google.rpc.BadRequest",
      },
    ]);
    const { assertion } = parsed(
      "assert error.details[google.rpc.BadRequest].fieldViolations[0].field exists",
    );
    const r = resolveResponsePath(assertion.path, echo, detailType);
    assert.equal(r.steps[1].type?.typeName, "google.rpc.BadRequest");
    assert.equal(r.steps[2].field?.name, "field_violations");
    assert.equal(
      problems("error.details.x exists")[0].message,
      "error.details is a list of error details: select one with [0], [*] or a type, as in error.details[google.rpc.BadRequest]",
    );
  });
});

describe("checkAssertionValue", () => {
  test("values of the right JSON type pass, numbers against 64-bit strings included", () => {
    for (const line of [
      'message.text == "a"',
      "message.int64Value == 5",
      'message.int64Value == "5"',
      "message.int32Value >= 1",
      'message.doubleValue == "NaN"',
      "message.flag == true",
      "message.color == COLOR_RED",
      'message.color != "COLOR_BLUE"',
      'message.tags == ["a"]',
      'message.tags contains "a"',
      'message.items contains {"name": "x"}',
      'message.nested == {"name": "x"}',
      'message.nested contains {"name": "x"}',
      'message.createdAt > "2024-01-01T00:00:00Z"',
      "message.value == null",
      'message.attributes == {"a": 1}',
      "message.wrappedInt64 == 3",
      "message.tags.length == 1",
      'messages[*].text == ["a", "b"]',
      'messages[*].text contains "a"',
      "duration < 100",
      "message.text matches /x/",
      "message.int32Value matches /^1/",
      "message.text isType string",
      "message.int64Value isType string",
      "message.items isType array",
      "messages[*].flag isType array",
      'headers["a"] contains "b"',
      "error.details.length >= 1",
      'error.details[google.rpc.ErrorInfo].reason == "R"',
    ]) {
      fine(line);
    }
    fine("message.number < 10", count);
  });

  test("type mismatches name what the path holds, with a fix where one is sure", () => {
    assert.deepEqual(problems("message.text == 5"), [
      {
        message: "message.text is a string, and this value is a number: write it in quotes",
        covers: "5",
        code: "type-mismatch",
        severity: "error",
        replacement: '"5"',
      },
    ]);
    assert.equal(
      problems('message.int64Value == "abc"')[0].message,
      'message.int64Value is an int64 (a JSON string), and this value is the string "abc", not a number',
    );
    assert.equal(
      problems("message.flag == 1")[0].message,
      "message.flag is a bool (a JSON boolean), and this value is a JSON number",
    );
    assert.equal(
      problems('message.nested == "x"')[0].message,
      "message.nested is a message demo.v1.Everything.Nested (a JSON object), and this value is a JSON string",
    );
    assert.equal(
      problems('message.tags == "a"')[0].message,
      "message.tags is a list (repeated string) (a JSON array), and this value is a JSON string",
    );
    assert.equal(
      problems("message.tags == [1]")[0].message,
      "an element of message.tags is a string, and this value is a number: write it in quotes",
    );
    assert.equal(
      problems("message.text == null")[0].message,
      "message.text is a string, which a response never holds as null: to check that it is absent, use !exists",
    );
  });

  test("enum values by name: unknown names suggest the closest, numbers suggest the name", () => {
    assert.deepEqual(problems("message.color == COLOR_REDD"), [
      {
        message:
          'unknown value "COLOR_REDD" of enum demo.v1.Color (did you mean COLOR_RED?); its values: COLOR_UNSPECIFIED, COLOR_RED, COLOR_GREEN, COLOR_BLUE',
        covers: "COLOR_REDD",
        code: "enum-value",
        severity: "error",
        replacement: "COLOR_RED",
      },
    ]);
    assert.equal(problems('message.color == "color_red"')[0].replacement, '"COLOR_RED"');
    assert.deepEqual(problems("message.color == 2"), [
      {
        message:
          "message.color is a demo.v1.Color value name: responses hold enum values by name; write COLOR_GREEN",
        covers: "2",
        code: "enum-value",
        severity: "error",
        replacement: "COLOR_GREEN",
      },
    ]);
    assert.equal(problems('message.colors contains "COLOR_PINK"')[0].code, "enum-value");
  });

  test("operators that cannot apply, and isType that always fails", () => {
    assert.equal(
      problems("message.nested < 3")[0].message,
      "message.nested is a message demo.v1.Everything.Nested: < compares numbers or strings",
    );
    assert.equal(
      problems("message.flag contains true")[0].message,
      "message.flag is a bool: contains applies to strings, lists and objects",
    );
    assert.equal(
      problems("message.text contains 1")[0].message,
      "message.text is a string: contains looks for text in it, so the value is a string",
    );
    assert.equal(
      problems("message.items matches /x/")[0].message,
      "message.items is a list (repeated demo.v1.Everything.Nested): matches applies to strings (and numbers)",
    );
    assert.deepEqual(problems("message.int64Value isType number"), [
      {
        message:
          "message.int64Value is an int64 (a JSON string): in a response it is a JSON string, so isType number always fails",
        covers: "number",
        code: "type-mismatch",
        severity: "error",
      },
    ]);
    assert.match(
      problems("messages[*].text isType string")[0].message,
      /^messages\[\*\]\.text is an array \(one value per element, each a string\)/,
    );
    assert.match(
      problems('messages[*].text == "a"')[0].message,
      /compare it with an array, or use contains to look for one value$/,
    );
    assert.equal(
      problems("message.tags contains 3")[0].message,
      "an element of message.tags is a string, and this value is a number: write it in quotes",
    );
  });

  test("no checks below what the schema leaves open, nor for references resolved later", () => {
    fine("message.attributes.x.y == 3");
    fine('message.extra == "x"');
    fine("error.details[0].reason == 3");
    fine('message.text == "{{t}}"');
    fine("message.int32Value == {{n}}");
    fine("message.greeting exists", GreetService.method.greet);
  });
});
