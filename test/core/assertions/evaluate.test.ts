import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  type CheckResult,
  evaluateChecks,
  jsonEquals,
  lookupPath,
} from "../../../src/core/assertions/evaluate";
import type { CallOutcome } from "../../../src/core/assertions/outcome";
import { parseRpcFile } from "../../../src/core/rpcfile/parse";
import type { RpcRequest } from "../../../src/core/rpcfile/types";

const ok: CallOutcome = {
  status: "ok",
  headers: [
    ["Content-Type", "application/grpc+proto"],
    ["x-multi", "a"],
    ["X-Multi", "b"],
  ],
  trailers: [["x-cost", "7"]],
  messages: [
    {
      greeting: "Hello, world",
      count: 0,
      total: "9007199254740993",
      tags: ["a", "b"],
      nested: { city: "Oslo" },
    },
    {
      greeting: "Hello, again",
      count: 2,
      total: "5",
      tags: [],
      nested: { city: "Rome" },
      counts: { "5": 1 },
    },
  ],
  durationMs: 12.5,
};

const failed: CallOutcome = {
  status: "invalid_argument",
  headers: [],
  trailers: [],
  messages: [],
  error: {
    code: "invalid_argument",
    message: "name is required",
    details: [
      { type: "google.rpc.ErrorInfo", json: { reason: "MISSING", domain: "demo" } },
      {
        type: "google.rpc.BadRequest",
        json: { fieldViolations: [{ field: "name", description: "required" }] },
      },
      { type: "acme.Unknown", value: "AAEC" },
    ],
  },
  durationMs: 3,
};

/** The request of a file made of the given option lines. */
function request(...lines: string[]): RpcRequest {
  const file = parseRpcFile(`${lines.map((l) => `# @${l}`).join("\n")}\nhttp://localhost/a.B/C\n`);
  assert.deepEqual(
    file.diagnostics.map((d) => d.message),
    [],
  );
  return file.requests[0];
}

/** The result of one assertion (after the implicit status check, when there is one). */
function check(line: string, outcome: CallOutcome = ok): CheckResult {
  const r = request(`assert ${line}`);
  const e = evaluateChecks(outcome, { ...r, range: r.range });
  return e.checks[e.checks.length - 1];
}

function passes(line: string, outcome: CallOutcome = ok): void {
  const c = check(line, outcome);
  assert.equal(c.passed, true, `${line}: ${c.message}`);
  assert.equal(c.message, line);
}

function fails(line: string, message: string | RegExp, outcome: CallOutcome = ok): CheckResult {
  const c = check(line, outcome);
  assert.equal(c.passed, false, `${line} passed`);
  if (typeof message === "string") assert.equal(c.message, message);
  else assert.match(c.message, message);
  return c;
}

describe("evaluateChecks: operators", () => {
  test("== and != compare JSON values deeply", () => {
    passes('messages[0].greeting == "Hello, world"');
    fails(
      'messages[1].greeting == "Hello, world"',
      'expected messages[1].greeting == "Hello, world", got "Hello, again"',
    );
    passes('messages[0].tags == ["a", "b"]');
    fails('messages[0].tags == ["b", "a"]', /got \["a","b"\]$/);
    passes('messages[0].nested == {"city": "Oslo"}');
    fails('messages[0].nested == {"city": "Oslo", "zip": 1}', /got \{"city":"Oslo"\}$/);
    passes('messages[1].greeting != "Hello, world"');
    fails("messages[0].count != 0", "expected messages[0].count != 0, got 0");
    passes("messages[0].count == 0");
    fails("messages[0].count == false", /got 0$/);
    passes('message.counts == {"5": 1}');
  });

  test("numbers equal strings holding them; 64-bit integers compare exactly", () => {
    passes("messages[0].total == 9007199254740993");
    fails("messages[0].total == 9007199254740992", /got "9007199254740993"$/);
    passes('messages[1].count == "2"');
    passes("messages[1].total == 5.0");
    passes("messages[0].total > 9007199254740992");
    passes("messages[1].total < 10");
  });

  test("<, <=, >, >= compare two numbers or two strings, and say so otherwise", () => {
    passes("messages.length >= 2");
    passes("messages.length <= 2");
    fails("messages.length > 2", "expected messages.length > 2, got 2");
    fails("messages.length < 2", "expected messages.length < 2, got 2");
    passes('message.greeting > "Hello, a"');
    passes("duration < 100");
    fails(
      'messages.length > "x"',
      'expected messages.length > "x", got 2: > compares two numbers or two strings, and this is a number against a string',
    );
    fails("messages[0].tags >= 1", /this is an array against a number$/);
  });

  test("contains: text in a string, an element of an array, members of an object", () => {
    passes('headers["content-type"] contains "grpc"');
    passes('headers["content-type"] contains grpc');
    fails(
      'message.greeting contains "world"',
      'expected message.greeting contains "world", got "Hello, again"',
    );
    passes('messages[0].tags contains "b"');
    fails('messages[0].tags contains "c"', /got \["a","b"\]$/);
    passes('messages[0] contains {"greeting": "Hello, world", "count": 0}');
    fails('messages[0] contains {"greeting": "x"}', /^expected messages\[0\] contains/);
    passes('messages[0].tags !contains "c"');
    fails('messages[0].tags !contains "a"', /got \["a","b"\]$/);
    fails(
      "messages[0].count contains 0",
      "expected messages[0].count contains 0, got 0: contains applies to a string (with a string), an array, or an object (with an object), and this is a number against a number",
    );
  });

  test("matches and !matches: regular expressions with flags, on strings and numbers", () => {
    passes("message.greeting matches /^hello, (again|world)$/i");
    fails(
      "message.greeting matches /^hello/",
      'expected message.greeting matches /^hello/, got "Hello, again"',
    );
    passes("message.greeting !matches /^hello/");
    passes("message.count matches /^[0-9]+$/");
    fails(
      "message.tags matches /a/",
      "expected message.tags matches /a/, got []: matches applies to a string",
    );
  });

  test("exists and !exists; null counts as a value", () => {
    passes("message.nested.city exists");
    passes("message.zip !exists");
    fails(
      "message.zip exists",
      /^expected message\.zip exists, got nothing \(message has no member "zip"; its members: greeting, count, total, tags, nested, counts\)$/,
    );
    fails("message.count !exists", "expected message.count !exists, got 2");
    passes("message.n exists", { ...ok, messages: [{ n: null }] });
    passes("error !exists");
  });

  test("isType names the JSON type", () => {
    passes("message.greeting isType string");
    passes("message.count isType number");
    passes("message.total isType string");
    passes("message.tags isType array");
    passes("message.nested isType object");
    passes("message.n isType null", { ...ok, messages: [{ n: null, b: true }] });
    passes("message.b isType boolean", { ...ok, messages: [{ n: null, b: true }] });
    fails("message.count isType string", "expected message.count isType string, got 2: it is a number");
  });

  test("every operator but exists and !exists fails on a missing value", () => {
    for (const line of [
      "message.zip == 1",
      "message.zip != 1",
      "message.zip < 1",
      'message.zip contains "a"',
      'message.zip !contains "a"',
      "message.zip matches /a/",
      "message.zip !matches /a/",
      "message.zip isType string",
    ]) {
      const c = fails(line, /got nothing \(message has no member "zip"/);
      assert.equal(c.found, false);
      assert.equal("actual" in c, false);
    }
  });
});

describe("evaluateChecks: paths", () => {
  test("messages, indexes from the end, length of arrays and strings, message is the last", () => {
    passes('messages[-1].greeting == "Hello, again"');
    passes('messages[-2].greeting == "Hello, world"');
    fails(
      "messages[2].greeting exists",
      "expected messages[2].greeting exists, got nothing (messages has 2 elements)",
    );
    fails("messages[-3] exists", /messages has 2 elements/);
    passes("messages.length == 2");
    passes("messages[0].tags.length == 2");
    passes("message.greeting.length == 12");
    passes("message.nested.city.length == 4");
    passes("message.x.length == 3", { ...ok, messages: [{ x: "é😀a" }] });
    passes("message.o.length == 1", { ...ok, messages: [{ o: { length: 1 } }] });
    fails("message exists", /got nothing \(there is no response message\)$/, { ...ok, messages: [] });
    passes("messages.length == 0", { ...ok, messages: [] });
  });

  test("[*] applies the rest of the path to each element", () => {
    passes('messages[*].greeting == ["Hello, world", "Hello, again"]');
    passes('messages[*].greeting contains "Hello, again"');
    passes("messages[*].nested.city isType array");
    passes('messages[*].counts == [{"5": 1}]');
    passes("messages[*].tags.length == [2, 0]");
    fails("message.greeting[*] exists", /message\.greeting is a string \("Hello, again"\), not an array/);
  });

  test("quoted names and integer map keys", () => {
    passes('message["greeting"] == "Hello, again"');
    passes("message.counts[5] == 1");
    passes('message.counts["5"] == 1');
    fails('message["length"] exists', /message has no member "length"/);
  });

  test("headers and trailers by name, case-insensitively, repeated values joined", () => {
    passes('headers["content-type"] == "application/grpc+proto"');
    passes('headers["CONTENT-TYPE"] exists');
    passes('headers["x-multi"] == "a, b"');
    passes("headers.content_type !exists");
    passes('trailers["x-cost"] == 7');
    passes('trailers["X-Cost"].length == 1');
    fails('trailers["x-other"] exists', /trailers has no member "x-other"; its members: x-cost\)$/);
  });

  test("status and error: code, message, details by index and by type", () => {
    passes("status == ok");
    passes("status == invalid_argument", failed);
    passes("error.code == invalid_argument", failed);
    passes('error.message contains "required"', failed);
    passes("error.details.length == 3", failed);
    passes('error.details[0]["@type"] == "type.googleapis.com/google.rpc.ErrorInfo"', failed);
    passes('error.details[0].reason == "MISSING"', failed);
    passes('error.details[google.rpc.BadRequest].fieldViolations[0].field == "name"', failed);
    passes('error.details[acme.Unknown].value == "AAEC"', failed);
    fails(
      "error.details[google.rpc.QuotaFailure] exists",
      "expected error.details[google.rpc.QuotaFailure] exists, got nothing (no detail of type google.rpc.QuotaFailure (the details: google.rpc.ErrorInfo, google.rpc.BadRequest, acme.Unknown))",
      failed,
    );
    fails(
      "error.code == not_found",
      "expected error.code == not_found, got nothing (the status is ok: there is no error)",
    );
    fails("status == ok", 'expected status == ok, got "invalid_argument"', failed);
  });

  test("duration in milliseconds", () => {
    passes("duration == 12.5");
    passes("duration isType number");
  });

  test("a call that failed outside the RPC: no check runs, not even !exists or duration", () => {
    const refused: CallOutcome = {
      headers: [],
      trailers: [],
      messages: [],
      durationMs: 1,
      failure: "connection refused (127.0.0.1:1)",
    };
    for (const line of ["status == ok", "messages.length == 0", "error !exists", "duration >= 1"]) {
      const c = fails(line, "not checked: the call failed: connection refused (127.0.0.1:1)", refused);
      assert.equal(c.notRun, true, line);
      assert.equal(c.text, line);
    }
    // A path alone still says why it leads to nothing.
    const path = parseRpcFile("###\n# @assert messages.length == 0\nhttp://x/a.B/C\n").requests[0]
      .assertions[0].path;
    assert.deepEqual(lookupPath(refused, path), {
      found: false,
      reason: "the call failed: connection refused (127.0.0.1:1)",
    });
  });

  test("unset fields: with presence they are left out (!exists; == null says so), without it at their default", () => {
    // What call-outcome.ts hands over for an empty google.protobuf.DescriptorProto (proto2: every
    // singular field has presence; repeated fields are there, empty).
    const empty: CallOutcome = { ...ok, messages: [{ field: [], nestedType: [], reservedName: [] }] };
    fails(
      "message.options exists",
      /^expected message\.options exists, got nothing \(message has no member "options"/,
      empty,
    );
    passes("message.options !exists", empty);
    passes("message.field == []", empty);
    fails(
      "message.name == null",
      /^expected message\.name == null, got nothing \(.*\): an unset field is left out, not null: write message\.name !exists$/,
      empty,
    );
    // null is a value a message can hold (google.protobuf.Value): then == null holds.
    passes("message.value == null", { ...ok, messages: [{ value: null }] });
  });
});

describe("evaluateChecks: the request as a whole", () => {
  test("without an assertion on status or error, the status must be ok (checked first)", () => {
    const r = request('assert message.greeting == "Hello, again"');
    const good = evaluateChecks(ok, r);
    assert.equal(good.passed, true);
    assert.deepEqual(
      good.checks.map((c) => [c.kind, c.text, c.passed]),
      [
        ["status", "status == ok", true],
        ["assert", 'message.greeting == "Hello, again"', true],
      ],
    );
    assert.deepEqual(good.checks[0].range, r.range);
    const bad = evaluateChecks(failed, r);
    assert.equal(bad.passed, false);
    assert.equal(
      bad.checks[0].message,
      "expected status == ok, got invalid_argument: name is required (assert on status or error to expect a failure)",
    );
    const none = evaluateChecks(failed, request("capture x = duration"));
    assert.equal(none.passed, false);
    const outside = evaluateChecks({ ...failed, status: undefined, failure: "no such host" }, r);
    assert.deepEqual(
      outside.checks.map((c) => [c.kind, c.passed, c.notRun, c.message]),
      [
        ["status", false, true, "not checked: the call failed: no such host"],
        ["assert", false, true, "not checked: the call failed: no such host"],
      ],
    );
  });

  test("an assertion on status or error replaces the implicit check: an expected failure passes", () => {
    const e = evaluateChecks(
      failed,
      request("assert error.code == invalid_argument", "assert error.details.length > 1"),
    );
    assert.equal(e.passed, true);
    assert.deepEqual(
      e.checks.map((c) => c.kind),
      ["assert", "assert"],
    );
  });

  test("captures: strings as they are, other values as JSON; a missing value fails the request", () => {
    const e = evaluateChecks(
      ok,
      request(
        "capture greeting = message.greeting",
        "capture count = message.count",
        "capture city = messages[0].nested",
        "capture tags = messages[*].tags.length",
        'capture ct = headers["content-type"]',
      ),
    );
    assert.deepEqual(e.captured, {
      greeting: "Hello, again",
      count: "2",
      city: '{"city":"Oslo"}',
      tags: "[2,0]",
      ct: "application/grpc+proto",
    });
    assert.equal(e.passed, true);
    assert.deepEqual(
      e.checks.slice(1).map((c) => [c.kind, c.text, c.message]),
      [
        ["capture", "greeting = message.greeting", 'captured greeting = "Hello, again"'],
        ["capture", "count = message.count", "captured count = 2"],
        ["capture", "city = messages[0].nested", 'captured city = {"city":"Oslo"}'],
        ["capture", "tags = messages[*].tags.length", "captured tags = [2,0]"],
        ["capture", 'ct = headers["content-type"]', 'captured ct = "application/grpc+proto"'],
      ],
    );
    const missing = evaluateChecks(ok, request("capture token = message.token"));
    assert.equal(missing.passed, false);
    assert.deepEqual(missing.captured, {});
    assert.equal(
      missing.checks[1].message,
      'cannot capture token: message.token leads to nothing (message has no member "token"; its members: greeting, count, total, tags, nested, counts)',
    );
  });

  test("an unresolved {{reference}} in a value fails its assertion instead of comparing text", () => {
    fails(
      'message.greeting == "{{who}}"',
      'expected message.greeting == "{{who}}", got "Hello, again": the value "{{who}}" holds references that were not resolved',
    );
  });

  test("long actual values are cut in messages, and kept whole in the result", () => {
    const long = "x".repeat(500);
    const c = fails('message.s == "y"', /got "x{196}\.\.\.$/, { ...ok, messages: [{ s: long }] });
    assert.equal(c.actual, long);
  });
});

describe("jsonEquals", () => {
  test("objects in any member order; arrays in order; null only equals null", () => {
    assert.equal(jsonEquals({ a: 1, b: [1, { c: null }] }, { b: [1, { c: null }], a: 1 }), true);
    assert.equal(jsonEquals([1, 2], [2, 1]), false);
    assert.equal(jsonEquals(null, 0), false);
    assert.equal(jsonEquals("1", 1), true);
    assert.equal(jsonEquals("1x", 1), false);
    assert.equal(jsonEquals("NaN", 0), false);
    assert.equal(jsonEquals(true, "true"), false);
  });
});
