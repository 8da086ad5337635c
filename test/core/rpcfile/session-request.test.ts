import assert from "node:assert/strict";
import { test } from "node:test";
import { parseRpcFile } from "../../../src/core/rpcfile/parse";
import { sessionRequest } from "../../../src/core/rpcfile/session-request";

const file = `@host = http://127.0.0.1:8080

### A bidirectional stream
# @protocol grpc
# @assert messages.length >= 1
{{host}}/demo.v1.DemoService/Chat
x-trace: {{$uuid}}

{"text": "hello"}
{"text": "again"}

### Next
{{host}}/demo.v1.GreetService/Greet
`;

test("the messages sent become a new request after the last one, with the original's options, URL and headers", () => {
  const s = sessionRequest(file, 0, [{ text: "hi" }, { text: "typed in the panel" }], "10:42:07");
  assert.equal(s.name, "A bidirectional stream (session 10:42:07)");
  assert.equal(
    s.text,
    `### A bidirectional stream (session 10:42:07)
# @protocol grpc
# @assert messages.length >= 1
{{host}}/demo.v1.DemoService/Chat
x-trace: {{$uuid}}

{"text":"hi"}
{"text":"typed in the panel"}
`,
  );
  let out = file;
  for (const i of [...s.append.inserts].reverse())
    out = out.slice(0, i.offset) + i.text + out.slice(i.offset);
  const parsed = parseRpcFile(out);
  assert.equal(parsed.diagnostics.filter((d) => d.severity === "error").length, 0);
  assert.equal(parsed.requests.length, 3);
  const added = parsed.requests[2];
  assert.equal(added.name?.text, "A bidirectional stream (session 10:42:07)");
  assert.equal(added.url?.text, "{{host}}/demo.v1.DemoService/Chat");
  assert.deepEqual(
    added.body.map((b) => (b.kind === "json" ? JSON.parse(b.text) : b.kind)),
    [{ text: "hi" }, { text: "typed in the panel" }],
  );
  assert.equal(added.assertions.length, 1);
});

test("a request without ### or body, and a session that sent nothing", () => {
  const s = sessionRequest("http://h/demo.v1.DemoService/Sum\n", 0, [], "now");
  assert.equal(s.text, "### request 1 (line 1) (session now)\nhttp://h/demo.v1.DemoService/Sum\n");
  assert.throws(() => sessionRequest("", 3, [], "now"), /no request #4/);
});
