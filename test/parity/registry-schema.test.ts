// Parity with `buf curl --schema REMOTE/owner/module[:ref]` (and `buf build` of a module): both tools
// against the same `protocall registry serve` (modules pushed by the real buf), the same tokens and
// trust. The same stdout and exit code for listings of a module with a dependency and for a call; the
// same first line of the error, in buf's words, for every refusal (unknown module or label, no token,
// a refused token, no role, an unreachable registry, a server without the module API, a registry
// that does not answer within --timeout, where both end the call with exit code 1 and "context deadline
// exceeded"). buf prints "Failure: " where Protocall prints
// "protocall: ", and Protocall keeps to one line where buf adds advice lines. Also: `protocall convert`
// with a type from a module.
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { bufPath } from "../support/buf";
import { type RunResult, runCli, runProcess } from "../support/cli";
import { type HostileRegistry, startHostileRegistry } from "../support/hostile-registry";
import { startTestRegistry, type TestRegistry, tempWorkspace } from "../support/registry";
import { examplesDir, startDemoServer } from "../support/servers";
import { createTestPki } from "../support/tls";

let registry: TestRegistry;
let hostile: HostileRegistry;
let cache: string;

const petapis = 'syntax = "proto3";\n\npackage pet.v1;\n\nmessage Pet {\n  string name = 1;\n}\n';
const petstore =
  'syntax = "proto3";\n\npackage store.v1;\n\nimport "pet/v1/pet.proto";\n\nservice StoreService {\n  rpc Buy(pet.v1.Pet) returns (pet.v1.Pet);\n  rpc Sell(pet.v1.Pet) returns (pet.v1.Pet);\n}\n\nservice AuditService {\n  rpc Log(pet.v1.Pet) returns (pet.v1.Pet);\n}\n';

before(async () => {
  const pki = await createTestPki(["localhost"]);
  [registry, hostile] = await Promise.all([startTestRegistry({ pki }), startHostileRegistry(pki)]);
  cache = mkdtempSync(join(tmpdir(), "protocall-registry-parity-cache-"));
  const push = ["push", "--create", "--create-visibility", "private"];
  const pets = tempWorkspace({
    "buf.yaml": registry.bufYaml([
      { path: "store", name: "acme/petstore" },
      { path: "pets", name: "acme/petapis" },
    ]),
    "pets/pet/v1/pet.proto": petapis,
    "store/store/v1/store.proto": petstore,
  });
  const demoFiles: Record<string, string> = {
    "buf.yaml": registry.bufYaml([{ path: "proto", name: "acme/demo" }]),
  };
  for (const name of readdirSync(join(examplesDir, "proto/demo/v1"))) {
    demoFiles[`proto/demo/v1/${name}`] = readFileSync(join(examplesDir, "proto/demo/v1", name), "utf8");
  }
  for (const ws of [pets, tempWorkspace(demoFiles)]) {
    const r = await registry.buf(push, { cwd: ws, token: "alice-token" });
    assert.equal(r.code, 0, r.stderr);
  }
});

after(async () => {
  await Promise.all([registry?.close(), hostile?.close()]);
});

interface Pair {
  ours: RunResult;
  buf: RunResult;
}

/** `protocall curl` and `buf curl` with the same arguments and environment (buf first: it is the peer). */
async function both(args: string[], env: Record<string, string | undefined>, tool = "curl"): Promise<Pair> {
  const run = { env: { ...env, PROTOCALL_CACHE_DIR: cache }, timeoutMs: 60_000 };
  const buf = await runProcess(bufPath, [tool, ...args], run);
  const ours = await runCli([tool, ...args], run);
  return { ours, buf };
}

function describePair({ ours, buf }: Pair): string {
  return `protocall exit ${ours.code}: ${ours.stderr}\nbuf exit ${buf.code}: ${buf.stderr}`;
}

function sameOutput(pair: Pair) {
  assert.equal(pair.buf.code, 0, describePair(pair));
  assert.equal(pair.ours.code, 0, describePair(pair));
  assert.equal(pair.ours.stdout, pair.buf.stdout);
}

/** The same exit code (1), and Protocall's one line starts with buf's first line. */
function sameRefusal(pair: Pair): string {
  const context = describePair(pair);
  assert.equal(pair.buf.code, 1, context);
  assert.equal(pair.ours.code, pair.buf.code, context);
  assert.equal(pair.ours.stdout, "");
  assert.match(pair.ours.stderr, /^protocall: \S.*\n$/, `one line\n${context}`);
  const bufLine = pair.buf.stderr
    .split("\n")[0]
    .replace(/^Failure: /, "")
    .replace(/\.$/, "");
  const ours = pair.ours.stderr.replace(/^protocall: /, "");
  assert.ok(ours.startsWith(bufLine), `protocall's message starts with buf's\n${context}`);
  return ours;
}

describe("the same output as buf", () => {
  test("--list-services and --list-methods of a module with a dependency, cold and warm", async () => {
    const env = registry.env("alice-token");
    for (const flag of ["--list-services", "--list-methods", "--list-services"]) {
      sameOutput(await both(["--schema", `${registry.remote}/acme/petstore`, flag], env));
    }
    sameOutput(await both(["--schema", `${registry.remote}/acme/petstore:main`, "--list-methods"], env));
  });

  test("a call whose schema comes from a module", async () => {
    const demo = await startDemoServer({ reflection: false });
    try {
      const args = [
        "--schema",
        `${registry.remote}/acme/demo`,
        "-d",
        '{"name": "Ada"}',
        `${demo.url}/demo.v1.GreetService/Greet`,
      ];
      const pair = await both(args, registry.env("alice-token"));
      sameOutput(pair);
      assert.match(pair.ours.stdout, /Ada/);
    } finally {
      await demo.close();
    }
  });

  test("BUF_TOKEN as a list of token@remote, netrc, and PROTOCALL_TOKEN", async () => {
    const list = { ...registry.env(), BUF_TOKEN: `nope@other.example.com,alice-token@${registry.remote}` };
    sameOutput(await both(["--schema", `${registry.remote}/acme/petstore`, "--list-services"], list));
    const home = mkdtempSync(join(tmpdir(), "protocall-netrc-home-"));
    writeFileSync(join(home, ".netrc"), `machine ${registry.remote}\nlogin alice\npassword alice-token\n`, {
      mode: 0o600,
    });
    const netrc = { ...registry.env(), HOME: home };
    sameOutput(await both(["--schema", `${registry.remote}/acme/petstore`, "--list-services"], netrc));
    const ours = await runCli(
      ["curl", "--schema", `${registry.remote}/acme/petstore:main`, "--list-services"],
      {
        env: { ...registry.env(), PROTOCALL_TOKEN: "alice-token", PROTOCALL_CACHE_DIR: cache },
        timeoutMs: 60_000,
      },
    );
    assert.equal(ours.code, 0, ours.stderr);
    assert.equal(ours.stdout, "store.v1.AuditService\nstore.v1.StoreService\n");
  });

  test("protocall build of a module holds the files buf build holds", async () => {
    const dir = mkdtempSync(join(tmpdir(), "protocall-registry-build-"));
    const env = registry.env("alice-token");
    const bufOut = join(dir, "buf.binpb");
    const oursOut = join(dir, "ours.binpb");
    const b = await registry.buf(["build", `${registry.remote}/acme/petstore`, "-o", bufOut], {
      token: "alice-token",
    });
    assert.equal(b.code, 0, b.stderr);
    const o = await runCli(["build", `${registry.remote}/acme/petstore`, "-o", oursOut], {
      env: { ...env, PROTOCALL_CACHE_DIR: cache },
      timeoutMs: 60_000,
    });
    assert.equal(o.code, 0, o.stderr);
    const names = (path: string) =>
      fromBinary(FileDescriptorSetSchema, readFileSync(path))
        .file.map((f) => f.name)
        .sort();
    assert.deepEqual(names(oursOut), names(bufOut));
    assert.deepEqual(names(oursOut), ["pet/v1/pet.proto", "store/v1/store.proto"]);
  });
});

describe("refusals worded as buf words them", () => {
  const list = (spec: string, ...more: string[]) => ["--schema", spec, "--list-services", ...more];

  test("an unknown module and an unknown label", async () => {
    const env = registry.env("alice-token");
    assert.equal(
      sameRefusal(await both(list(`${registry.remote}/acme/nope`), env)),
      'module "acme/nope" was not found\n',
    );
    assert.match(
      sameRefusal(await both(list(`${registry.remote}/acme/petapis:nolabel`), env)),
      /^no commit or label "nolabel" was found in module acme\/petapis/,
    );
  });

  test("no token, a refused token, and a token without a role", async () => {
    const spec = `${registry.remote}/acme/petapis`;
    assert.match(
      sameRefusal(await both(list(spec), registry.env())),
      /^you are not authenticated for localhost:\d+\./,
    );
    assert.match(
      sameRefusal(await both(list(spec), registry.env("wrong-token"))),
      /^the BUF_TOKEN environment variable is not valid for localhost:\d+\./,
    );
    assert.match(sameRefusal(await both(list(spec), registry.env("carol-token"))), /^permission_denied: /);
  });

  test("an unreachable registry", async () => {
    const ours = sameRefusal(await both(list("localhost:1/acme/petapis"), registry.env("alice-token")));
    assert.match(
      ours,
      /^the server hosted at that remote is unavailable \(https:\/\/localhost:1: connection refused\)/,
    );
  });

  test("a server without the module API, and one that answers with a web page", async () => {
    const env = { ...registry.env("t"), PROTOCALL_CACHE_DIR: cache };
    hostile.mode = "no-api";
    try {
      assert.match(
        sameRefusal(await both(list(`${hostile.remote}/acme/app`), env)),
        /^unimplemented: 404 Not Found for https:\/\/localhost:\d+\/buf\.registry\.module\.v1\.CommitService\/GetCommits; /,
      );
      hostile.mode = "html";
      assert.match(
        sameRefusal(await both(list(`${hostile.remote}/acme/app`), env)),
        /^unknown: invalid content-type: "text\/html"; expecting "application\/proto"/,
      );
    } finally {
      hostile.mode = "ok";
    }
  });

  test("a registry that does not answer within --timeout", async () => {
    hostile.mode = "silent";
    try {
      const pair = await both(list(`${hostile.remote}/acme/app`, "--timeout", "2s"), registry.env("t"));
      // buf: `deadline_exceeded: context deadline exceeded`; Protocall says which step --timeout ended,
      // as for every step before the request goes out.
      assert.equal(pair.buf.code, 1, describePair(pair));
      assert.equal(pair.ours.code, 1, describePair(pair));
      assert.match(pair.buf.stderr, /^Failure: deadline_exceeded: context deadline exceeded\n$/);
      assert.match(
        pair.ours.stderr,
        /^protocall: timed out after 2s \(--timeout\) .*: context deadline exceeded\n$/,
      );
    } finally {
      hostile.mode = "ok";
    }
  });
});

test("protocall convert takes its --type from a module", async () => {
  const r = await runCli(
    [
      "convert",
      "--type",
      "pet.v1.Pet",
      "--schema",
      `${registry.remote}/acme/petapis`,
      "-d",
      '{"name": "rex"}',
    ],
    {
      env: { ...registry.env("alice-token"), PROTOCALL_CACHE_DIR: cache },
      timeoutMs: 60_000,
    },
  );
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual([...r.stdoutBytes], [0x0a, 0x03, ...Buffer.from("rex")]);
});
