import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseRpcFile } from "../../../src/core/rpcfile/parse";
import type { Diagnostic, Token } from "../../../src/core/rpcfile/types";
import {
  type CaptureSource,
  findReferences,
  parseVariableAssignment,
  VariableResolver,
  type VariableScope,
} from "../../../src/core/rpcfile/variables";

function scope(text: string, extra: Partial<VariableScope> = {}): VariableScope {
  return {
    fileVariables: parseRpcFile(text).variables,
    environment: {},
    processEnv: {},
    dotenv: {},
    ...extra,
  };
}

function tok(text: string, line = 10, character = 4): Token {
  const lines = text.split("\n");
  const last = lines[lines.length - 1];
  return {
    text,
    range: {
      start: { line, character },
      end: {
        line: line + lines.length - 1,
        character: lines.length === 1 ? character + last.length : last.length,
      },
    },
  };
}

function resolve(s: VariableScope, text: string): { value: string; diagnostics: Diagnostic[] } {
  const diagnostics: Diagnostic[] = [];
  const value = new VariableResolver(s).resolve(tok(text), diagnostics);
  return { value, diagnostics };
}

describe("findReferences", () => {
  test("finds each {{...}} with its range, name and arguments, also on later lines of a token", () => {
    const refs = findReferences(tok('a {{ host }}b{{$randomInt 1  9}}\n  "x": "{{$env HOME}}"'));
    assert.deepEqual(
      refs.map((r) => [r.name, r.args, r.system, r.range]),
      [
        ["host", [], false, { start: { line: 10, character: 6 }, end: { line: 10, character: 16 } }],
        [
          "$randomInt",
          ["1", "9"],
          true,
          { start: { line: 10, character: 17 }, end: { line: 10, character: 36 } },
        ],
        ["$env", ["HOME"], true, { start: { line: 11, character: 8 }, end: { line: 11, character: 21 } }],
      ],
    );
  });
});

describe("VariableResolver", () => {
  test("the selected environment wins over file variables; values may refer to other variables", () => {
    const s = scope("@host = http://{{domain}}:{{port}}\n@port = 8080\n", {
      environment: { domain: "example.com", port: "9999" },
      environmentName: "dev",
    });
    assert.deepEqual(resolve(s, "{{host}}/a.B/C"), {
      value: "http://example.com:9999/a.B/C",
      diagnostics: [],
    });
  });

  test("precedence: --var, then captures, then the environment, then file variables, then $shared", () => {
    const file = "@a = file\n@b = file\n@c = file\n@d = file\n@e = file\n";
    const layers: Partial<VariableScope> = {
      overrides: { a: "var" },
      captures: { a: "captured", b: "captured" },
      environment: { a: "env", b: "env", c: "env" },
      sharedEnvironment: { a: "shared", b: "shared", c: "shared", d: "shared", f: "shared" },
      environmentName: "dev",
    };
    const s = scope(file, layers);
    assert.equal(
      resolve(s, "{{a}} {{b}} {{c}} {{d}} {{e}} {{f}}").value,
      "var captured env file file shared",
    );
    // --var and captured values are taken as they are, never resolved again.
    assert.equal(resolve(scope("", { overrides: { x: "{{y}}" } }), "{{x}}").value, "{{y}}");
    assert.equal(resolve(scope("", { captures: { x: "{{$uuid}}" } }), "{{x}}").value, "{{$uuid}}");
    // An environment value (and a $shared one) may still refer to file variables.
    assert.equal(
      resolve(scope("@v = 2\n", { sharedEnvironment: { base: "api/v{{v}}" } }), "{{base}}").value,
      "api/v2",
    );
  });

  test("environment values may refer to other variables too", () => {
    const s = scope("@v = 2\n", { environment: { base: "api/v{{v}}" }, environmentName: "dev" });
    assert.equal(resolve(s, "{{base}}").value, "api/v2");
  });

  test("the last definition of a file variable wins", () => {
    assert.equal(resolve(scope("@a = 1\n@a = 2\n"), "{{a}}").value, "2");
  });

  test("system variables: $env, $dotenv, $uuid, $timestamp, $isoTimestamp, $randomInt", () => {
    const s = scope("", {
      processEnv: { TOKEN: "from-env" },
      dotenv: { SECRET: "from-dotenv" },
      now: () => new Date("2026-01-02T03:04:05.678Z"),
      random: () => 0.5,
      uuid: () => "00000000-0000-4000-8000-000000000000",
    });
    const r = resolve(
      s,
      "{{$env TOKEN}} {{$dotenv SECRET}} {{$uuid}} {{$timestamp}} {{$isoTimestamp}} {{$randomInt 10 20}}",
    );
    assert.deepEqual(r.diagnostics, []);
    assert.equal(
      r.value,
      "from-env from-dotenv 00000000-0000-4000-8000-000000000000 1767323045 2026-01-02T03:04:05.678Z 15",
    );
  });

  test("$randomInt stays within MIN (included) and MAX (excluded); the default UUID is a v4 UUID", () => {
    const low = resolve(scope("", { random: () => 0 }), "{{$randomInt -3 3}}").value;
    const high = resolve(scope("", { random: () => 0.999999 }), "{{$randomInt -3 3}}").value;
    assert.deepEqual([low, high], ["-3", "2"]);
    assert.match(
      resolve(scope(""), "{{$uuid}}").value,
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
  });

  test("a file variable is evaluated once per request: one $uuid for all its uses", () => {
    let n = 0;
    const s = scope("@id = {{$uuid}}\n", { uuid: () => `id-${++n}` });
    const r = new VariableResolver(s);
    const d: Diagnostic[] = [];
    assert.equal(r.resolve(tok("{{id}} {{id}} {{$uuid}}"), d), "id-1 id-1 id-2");
    assert.equal(new VariableResolver(s).resolve(tok("{{id}}"), d), "id-3");
  });

  test("an undefined variable is an error at its range and is not sent as text", () => {
    const r = resolve(scope("", { environmentName: "dev" }), "x {{nope}} y");
    assert.equal(r.value, "x  y");
    assert.equal(r.diagnostics.length, 1);
    assert.deepEqual(r.diagnostics[0].range, {
      start: { line: 10, character: 6 },
      end: { line: 10, character: 14 },
    });
    assert.match(r.diagnostics[0].message, /undefined variable \{\{nope\}\}.*environment "dev"/);
    assert.match(resolve(scope(""), "{{nope}}").diagnostics[0].message, /no environment is selected/);
  });

  test("problems: unknown system variables, wrong arguments, unset $env and $dotenv, cycles, unclosed and empty references", () => {
    const s = scope("@a = {{b}}\n@b = {{a}}\n@c = {{$env MISSING}}\n");
    const cases: [string, RegExp][] = [
      ["{{$nope}}", /unknown system variable \{\{\$nope\}\}/],
      ["{{$uuid x}}", /takes no arguments/],
      ["{{$randomInt 5}}", /takes MIN and MAX/],
      ["{{$randomInt 9 1}}", /two integers MIN < MAX/],
      ["{{$randomInt a b}}", /two integers/],
      ["{{$env MISSING}}", /environment variable MISSING is not set/],
      ["{{$dotenv MISSING}}", /MISSING is not defined in a \.env file/],
      ["{{a}}", /refers to itself \(@a → @b → @a\)/],
      ["{{c}}", /MISSING is not set.*\(in @c, line 3\)/],
      ["{{}}", /empty reference/],
      ["{{a b}}", /\{\{a b\}\} is not a variable reference/],
      ["x {{host", /`\{\{` is not closed/],
    ];
    for (const [text, pattern] of cases) {
      const r = resolve(s, text);
      assert.equal(r.diagnostics.length, 1, text);
      assert.match(r.diagnostics[0].message, pattern, text);
      assert.equal(r.diagnostics[0].severity, "error");
    }
  });
});

describe("captured variables that have not run", () => {
  const sources = new Map<string, CaptureSource[]>([
    ["token", [{ index: 0, label: "Log in", line: 2 }]],
    ["later", [{ index: 5, label: "request 6 (line 40)", line: 38 }]],
    ["own", [{ index: 2, label: "Me", line: 20 }]],
  ]);

  test("a name an earlier request captures, without a value, names the request to run first", () => {
    const r = resolve(scope("", { captureSources: sources, requestIndex: 2 }), "Bearer {{token}}");
    assert.deepEqual(
      r.diagnostics.map((d) => [d.code, d.message, d.range.start.character]),
      [
        [
          "capture-not-run",
          '{{token}} has no value yet: it is captured by request "Log in" (line 3); run that request first',
          11,
        ],
      ],
    );
  });

  test("captured by a later request, or by the request itself: an error about the order", () => {
    const s = scope("", { captureSources: sources, requestIndex: 2, pendingCaptures: "defer" });
    assert.deepEqual(
      resolve(s, "{{later}}").diagnostics.map((d) => [d.code, d.message]),
      [
        [
          "capture-order",
          '{{later}} is captured by request "request 6 (line 40)" (line 39), which comes after this one; move that request before this one',
        ],
      ],
    );
    assert.deepEqual(
      resolve(s, "{{own}}").diagnostics.map((d) => d.message),
      [
        "{{own}} is captured by this request (line 21), so it has no value before the request runs; capture it in an earlier request",
      ],
    );
  });

  test("in defer mode the reference is kept as written and counted; a captured value or another definition wins", () => {
    const resolver = new VariableResolver(
      scope("", { captureSources: sources, requestIndex: 2, pendingCaptures: "defer" }),
    );
    const diagnostics: Diagnostic[] = [];
    assert.equal(resolver.resolve(tok('{"t": {{token}}}'), diagnostics), '{"t": {{token}}}');
    assert.deepEqual(diagnostics, []);
    assert.equal(resolver.deferred, 1);
    assert.equal(
      resolve(scope("", { captureSources: sources, requestIndex: 2, captures: { token: "t1" } }), "{{token}}")
        .value,
      "t1",
    );
    assert.equal(
      resolve(scope("@token = dev\n", { captureSources: sources, requestIndex: 2 }), "{{token}}").value,
      "dev",
    );
  });
});

describe("parseVariableAssignment", () => {
  test("name=value; the value may be empty or hold =", () => {
    assert.deepEqual(parseVariableAssignment("host=http://x:1"), ["host", "http://x:1"]);
    assert.deepEqual(parseVariableAssignment("q=a=b"), ["q", "a=b"]);
    assert.deepEqual(parseVariableAssignment("empty="), ["empty", ""]);
  });

  test("a missing value or an invalid name is a one-line error", () => {
    assert.throws(
      () => parseVariableAssignment("host"),
      /^ProtocallError: --var "host" needs a value: write --var name=value$/,
    );
    assert.throws(
      () => parseVariableAssignment("1x=a"),
      /^ProtocallError: --var "1x=a": "1x" is not a variable name \(letters, digits, _ \. and -, starting with a letter or _\); write --var name=value$/,
    );
  });
});
