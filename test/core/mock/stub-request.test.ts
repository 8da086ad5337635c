// "Call this stub": a stub's request part becomes a request file aimed at the running mock, which
// the mock answers with that stub.
import assert from "node:assert/strict";
import { test } from "node:test";
import { stubRequestText } from "../../../src/core/mock/stub-request";
import { parseRpcFile } from "../../../src/core/rpcfile/parse";

const stubs = `@greeting = Hello

### greet world
# @priority 10
# @match headers["x-tenant"] == "acme"
GRPC http://ignored:1/demo.v1.GreetService/Greet
x-tenant: acme

{"name": "world"}

>>> ok

{"greeting": "{{greeting}}"}

### sum
/demo.v1.DemoService/Sum

{"value": 1}
< ./more.json

>>> ok
`;

test("a stub's request part as a request to the mock: variables, method, headers and body documents", () => {
  const text = stubRequestText(stubs, 0, "http://127.0.0.1:9/", "/work/mocks");
  assert.equal(
    text,
    `@greeting = Hello\n\n### greet world\nhttp://127.0.0.1:9/demo.v1.GreetService/Greet\nx-tenant: acme\n\n{"name": "world"}\n`,
  );
  const parsed = parseRpcFile(text ?? "");
  assert.deepEqual(parsed.diagnostics, []);
  assert.equal(parsed.requests[0].url?.text, "http://127.0.0.1:9/demo.v1.GreetService/Greet");
  // Includes are resolved against the stub file's folder; a stub without a body sends {}.
  assert.equal(
    stubRequestText(stubs, 1, "http://127.0.0.1:9", "/work/mocks"),
    `@greeting = Hello\n\n### sum\nhttp://127.0.0.1:9/demo.v1.DemoService/Sum\n\n{"value": 1}\n< /work/mocks/more.json\n`,
  );
  assert.equal(
    stubRequestText("/demo.v1.GreetService/Greet\n\n>>> ok\n", 0, "http://h", "/"),
    "### call demo.v1.GreetService/Greet\nhttp://h/demo.v1.GreetService/Greet\n\n{}\n",
  );
  assert.equal(stubRequestText(stubs, 2, "http://h", "/"), undefined);
});
