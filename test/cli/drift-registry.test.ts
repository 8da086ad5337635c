// `protocall drift` with a registry module on either side: the module is fetched as `--schema`
// fetches it (the registry emulator, modules pushed by the real buf), and compared with the demo
// server's reflection and with a workspace.
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { runCli } from "../support/cli";
import { startTestRegistry, type TestRegistry, tempWorkspace } from "../support/registry";
import { type DemoServer, examplesDir, startDemoServer } from "../support/servers";

let registry: TestRegistry;
let demo: DemoServer;
let cache: string;
let changedGreet: string;

before(async () => {
  [registry, demo] = await Promise.all([startTestRegistry(), startDemoServer()]);
  cache = mkdtempSync(join(tmpdir(), "protocall-drift-registry-cache-"));
  const files = (name: string, edit: (path: string, text: string) => string = (_p, t) => t) => {
    const out: Record<string, string> = { "buf.yaml": registry.bufYaml([{ path: "proto", name }]) };
    for (const file of readdirSync(join(examplesDir, "proto/demo/v1"))) {
      const path = `proto/demo/v1/${file}`;
      out[path] = edit(path, readFileSync(join(examplesDir, path), "utf8"));
    }
    return out;
  };
  const changed = files("acme/demo-next", (path, text) => {
    if (!path.endsWith("greet.proto")) return text;
    assert.ok(text.includes("  string name = 1;\n"));
    changedGreet = text.replace("  string name = 1;\n", "  string name = 1;\n  string title = 2;\n");
    return changedGreet;
  });
  for (const ws of [tempWorkspace(files("acme/demo")), tempWorkspace(changed)]) {
    const r = await registry.buf(["push", "--create", "--create-visibility", "private"], {
      cwd: ws,
      token: "alice-token",
    });
    assert.equal(r.code, 0, r.stderr);
  }
});

after(async () => {
  await Promise.all([registry?.close(), demo?.close()]);
});

const run = (args: string[]) =>
  runCli(["drift", ...args, "--format", "json"], {
    env: { ...registry.env("alice-token"), PROTOCALL_CACHE_DIR: cache },
    timeoutMs: 120_000,
  });

test("the demo server against the module it was built from: no differences", async () => {
  const r = await run([demo.url, "--against", `${registry.remote}/acme/demo`]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const report = JSON.parse(r.stdout);
  assert.deepEqual(report.against, { spec: `${registry.remote}/acme/demo`, kind: "module" });
  assert.deepEqual(report.differences, []);
});

test("the server against a newer module: the field the module added is missing on the server, at the module's file:line", async () => {
  const r = await run([demo.url, "--against", `${registry.remote}/acme/demo-next:main`]);
  assert.equal(r.code, 1, r.stdout + r.stderr);
  const [d, ...rest] = JSON.parse(r.stdout).differences;
  assert.deepEqual(rest, []);
  assert.equal(d.name, "demo.v1.GreetRequest.title");
  assert.equal(d.change, "missing");
  assert.equal(d.breaking, true);
  const line = changedGreet.split("\n").findIndex((l) => l.includes("title = 2")) + 1;
  assert.deepEqual(d.against, { file: "demo/v1/greet.proto", line });
});

test("a module against a workspace", async () => {
  const r = await run([`${registry.remote}/acme/demo-next`, "--against", examplesDir]);
  assert.equal(r.code, 2, r.stdout + r.stderr);
  const [d] = JSON.parse(r.stdout).differences;
  assert.equal(d.change, "added");
  assert.equal(d.breaking, false);
  assert.deepEqual(d.against.file, join(examplesDir, "proto/demo/v1/greet.proto"));
});
