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
