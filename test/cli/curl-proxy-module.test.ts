// A registry module's registry is reached through the call's --proxy too (`--schema REMOTE/owner/module`
// with `--proxy`, no proxy variables set): the module is fetched through a real tinyproxy, whose log
// shows the CONNECT to the registry.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { runCli } from "../support/cli";
import { startTinyproxy, type TestProxy } from "../support/proxy";
import { startTestRegistry, type TestRegistry, tempWorkspace } from "../support/registry";
import { createTestPki } from "../support/tls";

let proxy: TestProxy;
let registry: TestRegistry;

const store =
  'syntax = "proto3";\n\npackage store.v1;\n\n// Sells pets.\nservice StoreService {\n  rpc Buy(Pet) returns (Pet);\n}\n\nmessage Pet {\n  string name = 1;\n}\n';

before(async () => {
  const pki = await createTestPki(["localhost", "0.0.0.0"]);
  [proxy, registry] = await Promise.all([startTinyproxy(), startTestRegistry({ pki })]);
  const ws = tempWorkspace({
    "buf.yaml": registry.bufYaml([{ path: "store", name: "acme/petstore" }]),
    "store/store/v1/store.proto": store,
  });
  const r = await registry.buf(["push", "--create", "--create-visibility", "private"], {
    cwd: ws,
    token: "alice-token",
  });
  assert.equal(r.code, 0, r.stderr);
});

after(async () => {
  await Promise.all([proxy?.stop(), registry?.close()]);
});

test("--schema REMOTE/owner/module goes through --proxy", async () => {
  const remote = `0.0.0.0:${registry.port}`;
  const env = {
    ...registry.env("alice-token"),
    HTTPS_PROXY: undefined,
    https_proxy: undefined,
    ALL_PROXY: undefined,
    all_proxy: undefined,
    NO_PROXY: undefined,
    no_proxy: undefined,
  };
  const r = await runCli(
    ["curl", "--proxy", proxy.url, "--schema", `${remote}/acme/petstore`, "--list-services"],
    {
      env,
    },
  );
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /store\.v1\.StoreService/);
  assert.ok(proxy.connects().includes(remote), `no CONNECT ${remote}: ${proxy.connects().join(", ")}`);
});
