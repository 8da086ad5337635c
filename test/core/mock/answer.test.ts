// An answer without delays is played at once (answerAtOnce, what unary and client-streaming calls
// use) or as a stream (playAnswer, what streams use); both must send the same thing: headers,
// messages, their JSON for the call log, trailers, and the error with its details.
import assert from "node:assert/strict";
import { test } from "node:test";
import { type JsonValue, type Message, toBinary } from "@bufbuild/protobuf";
import { ConnectError, createHandlerContext } from "@connectrpc/connect";
import { answerAtOnce, isImmediate, playAnswer } from "../../../src/core/mock/answer";
import { loadStubText } from "../../../src/core/mock/stub-load";
import { outcomeOf } from "../../../src/core/mock/stub-match";
import { demoSchema } from "./support";

const stubs = `@greeting = Hello

### fixed, with a header and a trailer
/demo.v1.GreetService/Greet

>>> ok
x-served-by: {{greeting}} mock
# @trailer x-cost: 3

{"greeting": "{{greeting}}, {{request.name}}!"}

### an error with details from the request
/demo.v1.DemoService/Fail

>>> resource_exhausted "over quota for {{request.message}}"
x-quota: calls
# @detail google.rpc.ErrorInfo {"reason": "QUOTA", "domain": "{{request.message}}.example"}
# @detail demo.v1.QuotaExceeded {"resource": "calls", "limit": "10", "retryAfter": "30s"}

### a stream of three
/demo.v1.DemoService/Count

>>> ok

{"number": 1, "text": "one"}
{"number": 2, "text": "{{greeting}}"}
{"number": 3, "text": "three"}

### slow
/demo.v1.DemoService/Count

>>> ok
# @delay 10ms

{"number": 1}

### slow second message
/demo.v1.DemoService/Count

>>> ok

{"number": 1}
# @delay 10ms
{"number": 2}
`;

interface Played {
  headers: [string, string][];
  trailers: [string, string][];
  messages: string[];
  sent: JsonValue[];
  error?: { code: number; message: string; details: string[] };
}

const hex = (m: Message, desc: Parameters<typeof toBinary>[0]) =>
  Buffer.from(toBinary(desc, m as never)).toString("hex");

async function play(stubIndex: number, request: JsonValue, atOnce: boolean): Promise<Played> {
  const { stubs: loaded, errors, problems } = loadStubText(stubs, "s.rpc", demoSchema);
  assert.equal(errors, 0, problems.join("\n"));
  const stub = loaded[stubIndex];
  const method = stub.method;
  const ctx = createHandlerContext({
    service: method.parent,
    method,
    protocolName: "grpc",
    requestMethod: "POST",
    url: `http://127.0.0.1/${method.parent.typeName}/${method.name}`,
  });
  const scope = {
    outcome: outcomeOf({ headers: [], messages: [request] }),
    variables: stub.variables,
    env: {},
    where: stub.file,
  };
  const sent: JsonValue[] = [];
  const messages: string[] = [];
  let error: Played["error"];
  try {
    if (atOnce) {
      const last = answerAtOnce(stub.answers[0], ctx, method.output, scope, demoSchema, sent);
      if (last) messages.push(hex(last, method.output));
    } else {
      for await (const m of playAnswer(stub.answers[0], ctx, method.output, scope, demoSchema, sent)) {
        messages.push(hex(m, method.output));
      }
    }
  } catch (err) {
    const e = ConnectError.from(err);
    error = {
      code: e.code,
      message: e.rawMessage,
      details: e.details.map((d) =>
        "desc" in d ? hex(d.value as Message, d.desc) : Buffer.from(d.value).toString("hex"),
      ),
    };
  }
  return { headers: [...ctx.responseHeader], trailers: [...ctx.responseTrailer], messages, sent, error };
}

test("an answer without delays played at once sends what its stream would: headers, message, trailers", async () => {
  const once = await play(0, { name: "ann" }, true);
  const streamed = await play(0, { name: "ann" }, false);
  assert.deepEqual(once, streamed);
  assert.deepEqual(once.sent, [{ greeting: "Hello, ann!" }]);
  assert.deepEqual(once.headers, [["x-served-by", "Hello mock"]]);
  assert.deepEqual(once.trailers, [["x-cost", "3"]]);
});

test("an error answer played at once has the same code, message, headers and details", async () => {
  const once = await play(1, { message: "q" }, true);
  assert.deepEqual(once, await play(1, { message: "q" }, false));
  assert.equal(once.error?.message, "over quota for q");
  assert.equal(once.error?.details.length, 2);
  assert.deepEqual(once.headers, [["x-quota", "calls"]]);
});

test("several messages: at once gives the last, with every message's JSON for the call log", async () => {
  const once = await play(2, { count: 3 }, true);
  const streamed = await play(2, { count: 3 }, false);
  assert.deepEqual(once.sent, streamed.sent);
  assert.equal(once.sent.length, 3);
  assert.deepEqual(once.messages, streamed.messages.slice(-1));
});

test("only answers without any delay are played at once", () => {
  const { stubs: loaded } = loadStubText(stubs, "s.rpc", demoSchema);
  assert.deepEqual(
    loaded.map((s) => isImmediate(s.answers[0])),
    [true, true, true, false, false],
  );
});
