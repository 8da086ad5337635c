// Stub files: what the parser reads out of them, and every malformed stub as an error at
// file:line:col (never a crash), checked against the demo schema.
import assert from "node:assert/strict";
import { test } from "node:test";
import { loadStubText } from "../../../src/core/mock/stub-load";
import { parseStubFile } from "../../../src/core/rpcfile/stub-syntax";
import { demoSchema } from "./support";

const load = (text: string) => loadStubText(text, "s.rpc", demoSchema);

test("a stub reads as a request file plus its answers", () => {
  const parsed = parseStubFile(`@x = 1

### greet world
# @priority 7
# @match request.name matches /^w/
# @match headers["x-tenant"] == "a"
GRPC http://ignored:1/demo.v1.GreetService/Greet
x-tenant: a

{"name": "world"}

>>> ok
# @delay 20ms
# @trailer x-cost: 3
x-served-by: mock

{"greeting": "hi"}
# @delay 5ms
{"greeting": "again"}
>>> unavailable "try later"
# @detail google.rpc.RetryInfo {"retryDelay": "2s"}
`);
  assert.deepEqual(parsed.diagnostics, []);
  assert.equal(parsed.stubs.length, 1);
  const s = parsed.stubs[0];
  assert.equal(s.name, "greet world");
  assert.equal(s.method, "demo.v1.GreetService/Greet");
  assert.equal(s.priority, 7);
  assert.deepEqual(
    s.predicates.map((p) => p.text),
    ["request.name matches /^w/", 'headers["x-tenant"] == "a"'],
  );
  assert.deepEqual(
    s.headers.map((h) => [h.name.text, h.value.text]),
    [["x-tenant", "a"]],
  );
  assert.deepEqual(
    s.body.map((b) => b.text),
    ['{"name": "world"}'],
  );
  assert.equal(s.answers.length, 2);
  const [ok, err] = s.answers;
  assert.equal(ok.status, "ok");
  assert.equal(ok.delayMs, 20);
  assert.deepEqual(
    ok.headers.map((h) => [h.name.text, h.value.text]),
    [["x-served-by", "mock"]],
  );
  assert.deepEqual(
    ok.trailers.map((h) => [h.name.text, h.value.text]),
    [["x-cost", "3"]],
  );
  assert.deepEqual(
    ok.messages.map((m) => [m.text, m.delayMs, m.line]),
    [
      ['{"greeting": "hi"}', 0, 16],
      ['{"greeting": "again"}', 5, 18],
    ],
  );
  assert.equal(err.status, "unavailable");
  assert.equal(err.message, "try later");
  assert.deepEqual(
    err.details.map((d) => [d.type, d.json.text]),
    [["google.rpc.RetryInfo", '{"retryDelay": "2s"}']],
  );
  assert.deepEqual(load(`### a\n/demo.v1.GreetService/Greet\n\n>>> ok\n`).problems, []);
});

test("malformed stubs are errors at file:line:col, and a file with an error yields no stubs", () => {
  const cases: [string, RegExp][] = [
    ["/demo.v1.GreetService/Greet\n\n{}\n", /^s\.rpc:1:1: stub has no answer: add a line `>>> ok`/],
    ["/demo.v1.GreetService/Greet\n\n>>> nope\n", /^s\.rpc:3:5: unknown status "nope": write `>>> ok`/],
    [
      "/demo.v1.GreetService/Great\n\n>>> ok\n",
      /^s\.rpc:1:1: the schema has no method demo\.v1\.GreetService\/Great \(did you mean demo\.v1\.GreetService\/Greet\?\)/,
    ],
    [
      '/demo.v1.GreetService/Greet\n\n{"nam": "x"}\n\n>>> ok\n',
      /^s\.rpc:3:2: unknown field "nam" in message demo\.v1\.GreetRequest \(did you mean "name"\?\)/,
    ],
    [
      '/demo.v1.GreetService/Greet\n\n>>> ok\n\n{"greting": "x"}\n',
      /^s\.rpc:5:2: unknown field "greting" in message demo\.v1\.GreetResponse \(did you mean "greeting"\?\)/,
    ],
    [
      '/demo.v1.GreetService/Greet\n\n>>> not_found "x"\n# @detail google.rpc.ErrorInfo {"reasn": "r"}\n',
      /^s\.rpc:4:33: unknown field "reasn" in message google\.rpc\.ErrorInfo \(did you mean "reason"\?\)/,
    ],
    ['/demo.v1.GreetService/Greet\n\n>>> ok\n\n{\n  "greeting": 7\n}\n', /^s\.rpc:6:15: .*string/],
    ['/demo.v1.GreetService/Greet\n\n>>> ok\n\n{"greeting": \n', /^s\.rpc:5:1: /],
    [
      '/demo.v1.GreetService/Greet\n\n>>> not_found "x"\n# @detail google.rpc.ErrorInf {}\n',
      /^s\.rpc:4:11: unknown detail type google\.rpc\.ErrorInf \(did you mean google\.rpc\.ErrorInfo\?\)/,
    ],
    [
      "# @assert status == ok\n/demo.v1.GreetService/Greet\n\n>>> ok\n",
      /^s\.rpc:1:1: a stub tests its request with `# @match/,
    ],
    [
      "# @match status == ok\n/demo.v1.GreetService/Greet\n\n>>> ok\n",
      /^s\.rpc:1:10: @match tests the request/,
    ],
    ["# @match request.name ==\n/demo.v1.GreetService/Greet\n\n>>> ok\n", /^s\.rpc:1:/],
    [
      "# @priority high\n/demo.v1.GreetService/Greet\n\n>>> ok\n",
      /^s\.rpc:1:13: @priority takes a whole number/,
    ],
    [
      '/demo.v1.GreetService/Greet\n\n>>> ok\n\n{"greeting": "a"}\n{"greeting": "b"}\n',
      /^s\.rpc:6:1: demo\.v1\.GreetService\/Greet answers one message/,
    ],
    [
      '/demo.v1.GreetService/Greet\n\n>>> ok\n{"greeting": "a"}\n',
      /^s\.rpc:4:1: the response messages start after an empty line/,
    ],
    ["/demo.v1.GreetService/Greet\n\n>>> ok\n# @delay soon\n", /^s\.rpc:4:10: @delay takes a duration/],
    [
      '/demo.v1.GreetService/Greet\n\n>>> ok\n# @when request.name == "x"\n',
      /^s\.rpc:3:1: @when chooses an answer per incoming message/,
    ],
    ["not a method\n\n>>> ok\n", /^s\.rpc:1:1: /],
    [
      "# @per-message\n/demo.v1.DemoService/Sum\n\n>>> ok\n",
      /^s\.rpc:2:1: @per-message answers each incoming message of a bidirectional stream; demo\.v1\.DemoService\/Sum is client streaming/,
    ],
    [
      '/demo.v1.GreetService/Greet\n# @match request.name == "x"\n\n>>> ok\n',
      /^s\.rpc:2:1: @match goes before the request line/,
    ],
  ];
  for (const [text, expected] of cases) {
    const r = load(text);
    assert.ok(r.errors > 0, `no error for ${JSON.stringify(text)}`);
    assert.equal(r.stubs.length, 0);
    assert.match(r.problems[0], expected, `for ${JSON.stringify(text)}: ${r.problems.join("\n")}`);
  }
});

test("request bodies become subsets in proto JSON form: proto names, enum numbers and 64-bit integers are accepted", () => {
  const r = load(`/demo.v1.DemoService/Count

{"delay_ms": 5, "error_code": 5}

>>> ok
`);
  assert.deepEqual(r.problems, []);
  assert.deepEqual(r.stubs[0].body[0].subset, { delayMs: 5, errorCode: "CODE_NOT_FOUND" });
  const sum = load(`/demo.v1.DemoService/Sum

{"number": 1}
{"number": "2"}

>>> ok

{"sum": "3"}
`);
  assert.deepEqual(sum.problems, []);
  assert.deepEqual(
    sum.stubs[0].body.map((b) => b.subset),
    [{ number: "1" }, { number: "2" }],
  );
});

test("parsing never throws, whatever the text", () => {
  const pieces = [
    "###",
    ">>>",
    "# @match",
    "{",
    "}",
    '"',
    "/demo.v1.GreetService/Greet",
    "\n",
    "x: y",
    "# @delay",
    "ok",
    "[",
    "{{",
  ];
  let seed = 7;
  for (let i = 0; i < 300; i++) {
    let text = "";
    for (let j = 0; j < 30; j++) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      text += pieces[seed % pieces.length] + (seed % 3 === 0 ? "\n" : " ");
    }
    const r = load(text);
    assert.ok(Array.isArray(r.problems));
  }
});
