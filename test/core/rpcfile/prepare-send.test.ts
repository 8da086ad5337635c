import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { ProtocallError } from "../../../src/core/errors";
import { prepareSend } from "../../../src/core/rpcfile/prepare-send";

function workspace(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "protocall-prepare-"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

const text = `@host = {{base}}

### Greet
{{host}}/demo.v1.GreetService/Greet
Authorization: Bearer {{token}}

{"name": "{{who}}"}

### Timed
# @timeout 2s
# @protocol grpcweb
{{host}}/demo.v1.GreetService/Greet

### Verb
GRPC {{host}}/demo.v1.GreetService/Greet
`;

test("a request resolves with the selected environment, as protocall run would send it", () => {
  const dir = workspace({
    "protocall.env.json": JSON.stringify({
      $shared: { who: "shared" },
      dev: { base: "http://127.0.0.1:1", token: "t1" },
    }),
    "protocall.env.private.json": JSON.stringify({ dev: { token: "secret" } }),
  });
  const p = prepareSend({
    text,
    filePath: join(dir, "a.rpc"),
    requestIndex: 0,
    environment: "dev",
    processEnv: {},
  });
  assert.deepEqual(p.problems, []);
  assert.equal(p.label, "Greet");
  assert.equal(p.baseDir, dir);
  assert.equal(p.options?.url, "http://127.0.0.1:1/demo.v1.GreetService/Greet");
  assert.deepEqual(p.options?.headers, ["Authorization: Bearer secret"]);
  assert.equal(p.options?.data, '{"name": "shared"}');
  assert.equal(p.options?.protocol, "connect");
  assert.equal(p.options?.timeoutMs, undefined);
});

test("the editor's default protocol and timeout apply only where the request sets none", () => {
  const dir = workspace({
    "protocall.env.json": JSON.stringify({ dev: { base: "http://h", token: "", who: "" } }),
  });
  const at = (requestIndex: number) =>
    prepareSend({
      text,
      filePath: join(dir, "a.rpc"),
      requestIndex,
      environment: "dev",
      processEnv: {},
      defaultProtocol: "grpc",
      defaultTimeoutSeconds: 1.5,
    }).options;
  assert.equal(at(0)?.protocol, "grpc");
  assert.equal(at(0)?.timeoutMs, 1500);
  assert.equal(at(1)?.protocol, "grpcweb");
  assert.equal(at(1)?.timeoutMs, 2000);
  assert.equal(at(2)?.protocol, "grpc");
});

test("an undefined variable is a problem with its place, and there are no options to send", () => {
  const dir = workspace({});
  const file = join(dir, "a.rpc");
  const p = prepareSend({ text, filePath: file, requestIndex: 0, processEnv: {} });
  assert.equal(p.options, undefined);
  assert.ok(p.problems.length > 0);
  assert.match(
    p.problems[0].text,
    new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:4:1: undefined variable \\{\\{base\\}\\}`),
  );
});

test("a missing request or an unknown environment is a ProtocallError that says what to do", () => {
  const dir = workspace({ "protocall.env.json": JSON.stringify({ dev: {} }) });
  assert.throws(
    () => prepareSend({ text, filePath: join(dir, "a.rpc"), requestIndex: 7, processEnv: {} }),
    (err: unknown) => err instanceof ProtocallError && /has no request #8 \(it has 3\)/.test(err.message),
  );
  assert.throws(
    () =>
      prepareSend({
        text,
        filePath: join(dir, "a.rpc"),
        requestIndex: 0,
        environment: "prod",
        processEnv: {},
      }),
    (err: unknown) =>
      err instanceof ProtocallError && /environment "prod" is not defined.*defined: dev/.test(err.message),
  );
});

const chained = `@host = http://127.0.0.1:1

### Log in
# @capture token = message.token
# @capture n = message.count
{{host}}/demo.v1.AuthService/Login

### Me
# @assert message.owner == "{{token}}"
{{host}}/demo.v1.AuthService/Me
Authorization: Bearer {{token}}

{"token": "{{token}}", "n": {{n}}}
`;

test("an environment overrides a file variable; --var values override everything", () => {
  const dir = workspace({
    "protocall.env.json": JSON.stringify({
      $shared: { host: "http://shared:3" },
      staging: { host: "http://staging:2" },
    }),
  });
  const send = (o: { environment?: string; overrides?: Record<string, string> }) =>
    prepareSend({ text: chained, filePath: join(dir, "a.rpc"), requestIndex: 0, processEnv: {}, ...o })
      .options?.url;
  assert.equal(send({}), "http://127.0.0.1:1/demo.v1.AuthService/Login");
  assert.equal(send({ environment: "staging" }), "http://staging:2/demo.v1.AuthService/Login");
  assert.equal(
    send({ environment: "staging", overrides: { host: "http://var:4" } }),
    "http://var:4/demo.v1.AuthService/Login",
  );
});

test("captured values resolve later requests and their assertion values", () => {
  const dir = workspace({});
  const p = prepareSend({
    text: chained,
    filePath: join(dir, "a.rpc"),
    requestIndex: 1,
    processEnv: {},
    run: { captures: { token: "t-42", n: "5" } },
  });
  assert.deepEqual(p.problems, []);
  assert.deepEqual(p.options?.headers, ["Authorization: Bearer t-42"]);
  assert.equal(p.options?.data, '{"token": "t-42", "n": 5}');
  assert.deepEqual(
    p.assertions?.map((a) => a.value?.kind === "json" && a.value.json),
    ["t-42"],
  );
});

test("a capture that has not run names the request to run first; defer mode keeps it for later", () => {
  const dir = workspace({});
  const base = { text: chained, filePath: join(dir, "a.rpc"), requestIndex: 1, processEnv: {} };
  const p = prepareSend(base);
  assert.equal(p.options, undefined);
  assert.deepEqual(
    p.problems.map((x) => x.text.replace(dir, "DIR")),
    [
      'DIR/a.rpc:11:23: {{token}} has no value yet: it is captured by request "Log in" (line 4); run that request first',
      'DIR/a.rpc:13:12: {{token}} has no value yet: it is captured by request "Log in" (line 4); run that request first',
      'DIR/a.rpc:13:29: {{n}} has no value yet: it is captured by request "Log in" (line 5); run that request first',
      'DIR/a.rpc:9:29: {{token}} has no value yet: it is captured by request "Log in" (line 4); run that request first',
    ],
  );
  const deferred = prepareSend({ ...base, run: { pendingCaptures: "defer" } });
  assert.deepEqual(deferred.problems, []);
  // The body is not JSON until {{n}} has a value: it is checked then.
  assert.equal(deferred.options?.data, '{"token": "{{token}}", "n": {{n}}}');
  assert.equal(
    deferred.assertions?.[0].value?.kind === "json" && deferred.assertions[0].value.json,
    undefined,
  );
});
