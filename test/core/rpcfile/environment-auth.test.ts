// An environment's `$auth` gives requests their --auth value, with `{{...}}` resolved (the secret from
// the private companion file), unless the request gives its own credentials; a bad value is a problem
// on the request line, and nothing is sent.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { prepareSend } from "../../../src/core/rpcfile/prepare-send";

const dir = mkdtempSync(join(tmpdir(), "protocall-env-auth-"));
after(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
function prepare(auth: string, rpc: string, requestIndex = 0) {
  const root = join(dir, `ws${++n}`);
  mkdirSync(join(root, ".git"), { recursive: true });
  writeFileSync(
    join(root, "protocall.env.json"),
    JSON.stringify({ dev: { issuer: "https://id.example.com", $auth: auth } }),
  );
  writeFileSync(
    join(root, "protocall.env.private.json"),
    JSON.stringify({ dev: { clientSecret: "from-private-file" } }),
  );
  const filePath = join(root, "requests.rpc");
  writeFileSync(filePath, rpc);
  return prepareSend({ text: rpc, filePath, requestIndex, environment: "dev", processEnv: {} });
}

const spec = "oauth2 client_credentials issuer={{issuer}} client-id=cli client-secret={{clientSecret}}";

describe("$auth in an environment", () => {
  test("a request without credentials takes it, with its references resolved", () => {
    const r = prepare(spec, "http://localhost:1/a.S/M\n");
    assert.deepEqual(r.problems, []);
    assert.equal(
      r.options?.auth,
      "oauth2 client_credentials issuer=https://id.example.com client-id=cli client-secret=from-private-file",
    );
  });

  test("a request's own @auth, Authorization header or @user wins", () => {
    const rpc = `### own
# @auth oauth2 client_credentials token-url=https://other.example/token client-id=x client-secret=y
http://localhost:1/a.S/M

### header
http://localhost:1/a.S/M
Authorization: Bearer pasted

### user
# @user name:pw
http://localhost:1/a.S/M
`;
    assert.match(prepare(spec, rpc, 0).options?.auth ?? "", /other\.example/);
    assert.equal(prepare(spec, rpc, 1).options?.auth, undefined);
    assert.equal(prepare(spec, rpc, 2).options?.auth, undefined);
  });

  test("a bad value or an undefined variable is a problem on the request line", () => {
    const bad = prepare(
      "oauth2 client_credentials client-id=cli client-secret=x",
      "http://localhost:1/a.S/M\n",
    );
    assert.equal(bad.options, undefined);
    assert.match(
      bad.problems[0].text,
      /requests\.rpc:1:1: \$auth of environment "dev": say where the token comes from/,
    );
    const undefinedVariable = prepare(`${spec} scope={{nope}}`, "http://localhost:1/a.S/M\n");
    assert.equal(undefinedVariable.options, undefined);
    assert.match(undefinedVariable.problems[0].message, /^\$auth of environment "dev": .*nope/);
  });
});
