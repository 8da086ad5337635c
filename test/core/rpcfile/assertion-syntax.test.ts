import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { resolveAssertionValues } from "../../../src/core/rpcfile/assertion-syntax";
import { parseRpcFile, splitLines } from "../../../src/core/rpcfile/parse";
import type { Diagnostic, Range, RpcFile } from "../../../src/core/rpcfile/types";

/** The text a single-line range covers. */
function at(text: string, r: Range): string {
  assert.equal(r.start.line, r.end.line);
  return splitLines(text)[r.start.line].slice(r.start.character, r.end.character);
}

function parse(...options: string[]): { text: string; file: RpcFile } {
  const text = `### Test\n${options.map((o) => `# @${o}`).join("\n")}\nhttp://localhost:8080/a.B/C\n`;
  return { text, file: parseRpcFile(text) };
}

/** The only diagnostic of one option line: its message, the text it covers, its code and its fix. */
function problem(option: string): { message: string; covers: string; code?: string; replacement?: string } {
  const { text, file } = parse(option);
  assert.equal(file.diagnostics.length, 1, JSON.stringify(file.diagnostics.map((d) => d.message)));
  const d = file.diagnostics[0];
  assert.equal(d.severity, "error");
  assert.equal(file.requests[0].assertions.length + file.requests[0].captures.length, 0);
  const out: { message: string; covers: string; code?: string; replacement?: string } = {
    message: d.message,
    covers: at(text, d.range),
  };
  if (d.code) out.code = d.code;
  if (d.replacement) out.replacement = d.replacement;
  return out;
}

describe("@assert syntax", () => {
  test("path, operator and value, each with its exact range; not a curl option", () => {
    const { text, file } = parse('assert messages[0].greeting == "Hello, world"');
    assert.deepEqual(file.diagnostics, []);
    const r = file.requests[0];
    assert.deepEqual(r.options, []);
    const [a] = r.assertions;
    assert.equal(at(text, a.range), '# @assert messages[0].greeting == "Hello, world"');
    assert.equal(at(text, a.expression.range), a.expression.text);
    assert.equal(a.expression.text, 'messages[0].greeting == "Hello, world"');
    assert.equal(a.path.text, "messages[0].greeting");
    assert.equal(at(text, a.path.range), "messages[0].greeting");
    assert.equal(a.path.root, "messages");
    assert.equal(at(text, a.path.rootRange), "messages");
    assert.deepEqual(
      a.path.segments.map((s) => [s.kind, at(text, s.range)]),
      [
        ["index", "0"],
        ["key", "greeting"],
      ],
    );
    assert.equal(a.operator.text, "==");
    assert.equal(at(text, a.operator.range), "==");
    assert.equal(a.value?.kind, "json");
    assert.equal(at(text, a.value?.range as Range), '"Hello, world"');
    assert.deepEqual(a.value?.kind === "json" && a.value.json, "Hello, world");
  });

  test("every operator", () => {
    const { file } = parse(
      "assert status == ok",
      "assert status != not_found",
      "assert messages.length < 3",
      "assert messages.length <= 3",
      "assert duration > 0.5",
      "assert duration >= 1",
      'assert message.name contains "x"',
      'assert message.tags !contains "x"',
      "assert message.name matches /^a\\/b[/]c$/iu",
      "assert message.name !matches /x/",
      "assert message.name exists",
      "assert message.zip !exists",
      "assert message.tags isType array",
    );
    assert.deepEqual(file.diagnostics, []);
    const described = file.requests[0].assertions.map((a) => {
      const v = a.value;
      const value =
        v === undefined
          ? undefined
          : v.kind === "json"
            ? v.json
            : v.kind === "regex"
              ? `${v.source} ${v.flags}`
              : `type ${v.type}`;
      return [a.operator.text, value];
    });
    assert.deepEqual(described, [
      ["==", "ok"],
      ["!=", "not_found"],
      ["<", 3],
      ["<=", 3],
      [">", 0.5],
      [">=", 1],
      ["contains", "x"],
      ["!contains", "x"],
      ["matches", "^a\\/b[/]c$ iu"],
      ["!matches", "x "],
      ["exists", undefined],
      ["!exists", undefined],
      ["isType", "type array"],
    ]);
  });

  test("values: JSON literals, bare words as strings, exact number text, {{references}} left for later", () => {
    const { file } = parse(
      'assert message.a == {"x": [1, null, true]}',
      "assert message.color == COLOR_RED",
      "assert message.id == 9007199254740993",
      'assert message.id == "{{id}}"',
      "assert message.n == -1.5e3",
    );
    assert.deepEqual(file.diagnostics, []);
    const values = file.requests[0].assertions.map((a) => a.value);
    assert.deepEqual(
      values.map((v) => v?.kind === "json" && [v.json, v.bare, v.numberText]),
      [
        [{ x: [1, null, true] }, false, undefined],
        ["COLOR_RED", true, undefined],
        [2 ** 53, false, "9007199254740993"],
        [undefined, false, undefined],
        [-1500, false, "-1.5e3"],
      ],
    );
  });

  test("path forms: keys, quoted names, indexes from the end, [*], error detail types", () => {
    const { text, file } = parse(
      'assert headers["content-type"] exists',
      "assert trailers.grpc_status !exists",
      "assert messages[-1].items[*].name exists",
      'assert error.details[google.rpc.BadRequest].fieldViolations[0]["field"] == "name"',
      "assert message.tags.length == 2",
    );
    assert.deepEqual(file.diagnostics, []);
    const paths = file.requests[0].assertions.map((a) =>
      a.path.segments.map((s) => {
        const shown = at(text, s.range);
        switch (s.kind) {
          case "key":
            return `key ${s.key}${s.quoted ? " quoted" : ""} (${shown})`;
          case "index":
            return `index ${s.index} (${shown})`;
          case "each":
            return `each (${shown})`;
          default:
            return `type ${s.typeName} (${shown})`;
        }
      }),
    );
    assert.deepEqual(paths, [
      ['key content-type quoted ("content-type")'],
      ["key grpc_status (grpc_status)"],
      ["index -1 (-1)", "key items (items)", "each (*)", "key name (name)"],
      [
        "key details (details)",
        "type google.rpc.BadRequest (google.rpc.BadRequest)",
        "key fieldViolations (fieldViolations)",
        "index 0 (0)",
        'key field quoted ("field")',
      ],
      ["key tags (tags)", "key length (length)"],
    ]);
  });

  test("mistakes in the path are diagnostics on the offending part", () => {
    assert.deepEqual(problem("assert mesage.x == 1"), {
      message:
        'unknown path start "mesage" (did you mean message?); a path starts with status, message, messages, headers, trailers, error, duration',
      covers: "mesage",
      code: "unknown-path-root",
    });
    assert.deepEqual(problem("assert headers.content-type exists"), {
      message: 'a name with "-" goes in brackets and quotes: write ["content-type"]',
      covers: ".content-type",
      code: "invalid-path",
      replacement: '["content-type"]',
    });
    assert.deepEqual(problem("assert error.cod == not_found"), {
      message: 'error has the members code, message, details, not "cod" (did you mean code?)',
      covers: "cod",
      code: "unknown-path-member",
      replacement: "code",
    });
    assert.equal(problem("assert message. exists").covers, ".");
    assert.equal(problem("assert message.0 exists").message.includes('"0" is not a name'), true);
    assert.deepEqual(problem('assert message["unclosed exists'), {
      message: "this quoted name is not closed",
      covers: '"unclosed exists',
      code: "invalid-path",
    });
    assert.equal(problem("assert messages[0 exists").message, 'expected "]" to close the bracket');
    assert.match(problem("assert message[] exists").message, /^expected an index \(\[0\], \[-1\]\), \[\*\]/);
    assert.deepEqual(problem("assert message[Foo] exists"), {
      message:
        '[Foo] without quotes names an error detail type and goes right after error.details; for a member named Foo write .Foo or ["Foo"]',
      covers: "Foo",
      code: "invalid-path",
    });
    assert.equal(problem("assert status.x == 1").message, "status is a code name: it has no members");
    assert.equal(problem("assert duration[0] == 1").message, "duration is a number: it has no members");
    assert.equal(
      problem('assert headers[0] == "x"').message,
      'headers are looked up by name: headers["name"]',
    );
    assert.equal(
      problem('assert trailers["a"].b == "x"').message,
      "a trailer value is a string: only .length may follow it",
    );
    assert.equal(problem("assert error.code.x == 1").message, "error.code is a code name: it has no members");
    assert.deepEqual(problem("assert 3 == 3"), {
      message:
        'expected a path such as messages[0].name, found "3"; a path starts with status, message, messages, headers, trailers, error, duration',
      covers: "3",
      code: "invalid-path",
    });
    assert.equal(problem("assert message$ == 1").covers, "$");
  });

  test("mistakes in the operator and the value", () => {
    assert.deepEqual(problem("assert message.x = 1"), {
      message:
        'unknown operator "=" (did you mean ==?); operators: == != < <= > >= contains !contains matches !matches exists !exists isType',
      covers: "=",
      code: "unknown-operator",
    });
    assert.match(problem("assert message.x").message, /^@assert needs an operator after the path/);
    assert.deepEqual(problem("assert message.x ==  "), {
      message: '== needs a value after it, such as a JSON value such as 3 or "text"',
      covers: "==",
      code: "missing-value",
    });
    assert.deepEqual(problem("assert message.x == 'a'"), {
      message:
        "invalid value 'a': a value is JSON (a \"string\" in double quotes, a number, true, false, null, [an array] or {an object}), or a bare word such as ok",
      covers: "'a'",
      code: "invalid-value",
    });
    assert.equal(problem('assert message.x == {"a": }').covers, '{"a": }');
    assert.deepEqual(problem("assert message.x exists 1"), {
      message: 'exists takes no value; remove "1"',
      covers: "1",
      code: "invalid-assertion",
    });
    assert.deepEqual(problem("assert message.x isType strin"), {
      message:
        'isType takes a JSON type: string, number, boolean, object, array, null (did you mean string?); found "strin"',
      covers: "strin",
      code: "invalid-assertion",
    });
    assert.deepEqual(problem("assert message.x matches ^a"), {
      message: "matches takes a regular expression between slashes, such as /^Hello/ or /world/i; found ^a",
      covers: "^a",
      code: "invalid-regex",
    });
    assert.equal(problem("assert message.x matches /a").message, "the regular expression has no closing /");
    assert.deepEqual(problem("assert message.x matches /a/q"), {
      message: 'invalid regular expression flags "q": use d g i m s u v y',
      covers: "q",
      code: "invalid-regex",
    });
    assert.match(
      problem("assert message.x matches /(a/").message,
      /^invalid regular expression: \/\(a\/: Unterminated group$/,
    );
    assert.match(
      problem("assert message.x matches").message,
      /^matches needs a value after it, such as \/\^Hello\//,
    );
    assert.deepEqual(problem("assert"), {
      message:
        '@assert needs a path, an operator and (usually) a value: write # @assert status == ok or # @assert messages[0].name == "x"',
      covers: "# @assert",
      code: "missing-value",
    });
  });

  test("status and error.code values are code names, checked without a schema", () => {
    assert.deepEqual(problem("assert status == NOT_FOUND"), {
      message:
        "unknown status code NOT_FOUND (did you mean not_found?); codes: ok, canceled, unknown, invalid_argument, deadline_exceeded, not_found, already_exists, permission_denied, resource_exhausted, failed_precondition, aborted, out_of_range, unimplemented, internal, unavailable, data_loss, unauthenticated",
      covers: "NOT_FOUND",
      code: "invalid-status",
      replacement: "not_found",
    });
    assert.equal(problem('assert error.code != "notfound"').replacement, '"not_found"');
    assert.deepEqual(problem("assert status == 5"), {
      message: "status is a code name, not a number: write not_found",
      covers: "5",
      code: "invalid-status",
      replacement: "not_found",
    });
    assert.match(problem("assert status == 99").message, /^status is a code name, not a number; codes: ok, /);
    assert.equal(
      problem("assert status >= ok").message,
      "status is a code name such as ok or not_found: compare it with == or !=",
    );
    assert.deepEqual(
      parse("assert status matches /^(ok|not_found)$/", 'assert error.code == "{{expected}}"').file
        .diagnostics,
      [],
    );
  });

  test("@assert and @capture after the request line, and httpYac's ?? lines, are errors", () => {
    const text =
      '###\n# @assert status == ok\nhttp://h/a.B/C\n# @assert status == ok\nx: y\n\n{"a": 1}\n// @capture t = message.t\n?? status == 200\n{"a": 2}\n';
    const file = parseRpcFile(text);
    assert.deepEqual(
      file.diagnostics.map((d) => [d.severity, d.code, at(text, d.range)]),
      [
        ["error", "misplaced-assertion", "# @assert status == ok"],
        ["error", "misplaced-assertion", "// @capture t = message.t"],
        ["error", "misplaced-assertion", "?? status == 200"],
      ],
    );
    assert.match(file.diagnostics[0].message, /^@assert goes before the request line/);
    assert.match(file.diagnostics[2].message, /^assertions are request options: write `# @assert/);
    assert.equal(file.requests[0].assertions.length, 1);
    assert.equal(file.requests[0].body.length, 2);
  });

  test("a misspelled option name suggests assert and capture", () => {
    const { file } = parse("asert status == ok");
    assert.match(file.diagnostics[0].message, /^unknown request option @asert \(did you mean @assert\?\)/);
  });
});

describe("@capture syntax", () => {
  test("a name and a path, with ranges", () => {
    const { text, file } = parse("capture token = messages[0].auth.token", "capture n=duration");
    assert.deepEqual(file.diagnostics, []);
    const [c, d] = file.requests[0].captures;
    assert.equal(c.name.text, "token");
    assert.equal(at(text, c.name.range), "token");
    assert.equal(at(text, c.path.range), "messages[0].auth.token");
    assert.equal(at(text, c.range), "# @capture token = messages[0].auth.token");
    assert.deepEqual([d.name.text, d.path.root], ["n", "duration"]);
  });

  test("mistakes", () => {
    assert.match(
      problem("capture").message,
      /^@capture needs a variable name and a path: write # @capture <name> = <path>/,
    );
    assert.equal(problem("capture token message.x").covers, "token message.x");
    assert.deepEqual(problem("capture 1x = message.x"), {
      message: 'invalid variable name "1x": use letters, digits, _ . and -, starting with a letter or _',
      covers: "1x",
      code: "invalid-variable-name",
    });
    assert.match(problem("capture x =").message, /^@capture needs a path after "="/);
    assert.deepEqual(problem("capture x = message.a extra"), {
      message: 'unexpected "extra" after the path: a capture is a name and a path only',
      covers: "extra",
      code: "invalid-assertion",
    });
    assert.equal(problem("capture x = mesage.a").code, "unknown-path-root");
  });

  test("capturing one name twice in a request is a warning; the last wins", () => {
    const { text, file } = parse("capture t = message.a", "capture t = message.b");
    assert.deepEqual(
      file.diagnostics.map((d) => [d.severity, d.code, at(text, d.range), d.message]),
      [
        [
          "warning",
          "duplicate-capture",
          "t",
          "t is captured twice in this request (first on line 2); the last capture wins",
        ],
      ],
    );
    assert.equal(file.requests[0].captures.length, 2);
  });

  test("a request of only assertions still needs its URL", () => {
    const file = parseRpcFile("### Lonely\n# @assert status == ok\n");
    assert.equal(file.diagnostics[0].code, "missing-url");
  });
});

describe("resolveAssertionValues", () => {
  const resolveWith =
    (vars: Record<string, string>) =>
    (token: { text: string; range: Range }, diagnostics: Diagnostic[]): string =>
      token.text.replace(/\{\{(\w+)\}\}/g, (_, name: string) => {
        if (Object.hasOwn(vars, name)) return vars[name];
        diagnostics.push({ severity: "error", message: `undefined ${name}`, range: token.range });
        return "";
      });

  test("substitutes references, reads JSON, takes a lone reference that is not JSON as a string", () => {
    const { file } = parse(
      'assert message.id == "{{id}}"',
      "assert message.n == {{n}}",
      "assert message.s == {{word}}",
      "assert message.t == {{text}}",
      "assert message.o == {{obj}}",
      "assert status == ok",
    );
    const diagnostics: Diagnostic[] = [];
    const out = resolveAssertionValues(
      file.requests[0].assertions,
      resolveWith({ id: "a1", n: "9007199254740993", word: "abc", text: "two words", obj: '{"a":1}' }),
      diagnostics,
    );
    assert.deepEqual(diagnostics, []);
    assert.deepEqual(
      out.map((a) => a.value?.kind === "json" && [a.value.json, a.value.numberText]),
      [
        ["a1", undefined],
        [2 ** 53, "9007199254740993"],
        ["abc", undefined],
        ["two words", undefined],
        [{ a: 1 }, undefined],
        ["ok", undefined],
      ],
    );
    // The parsed file is not changed.
    assert.equal(
      file.requests[0].assertions[0].value?.kind === "json" && file.requests[0].assertions[0].value.json,
      undefined,
    );
  });

  test("undefined references and values that are not JSON leave their assertions out", () => {
    const { file } = parse(
      "assert message.a == {{missing}}",
      "assert message.b == [{{x}}, 2",
      "assert message.c == 1",
    );
    const diagnostics: Diagnostic[] = [];
    const out = resolveAssertionValues(file.requests[0].assertions, resolveWith({ x: "1" }), diagnostics);
    assert.deepEqual(
      out.map((a) => a.path.text),
      ["message.c"],
    );
    assert.deepEqual(
      diagnostics.map((d) => d.message),
      [
        "undefined missing",
        'after substituting variables, the value "[1, 2" is not JSON; put references in strings in quotes, as in == "{{name}}"',
      ],
    );
  });
});
