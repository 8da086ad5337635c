// The real buf CLI (1.75, from @bufbuild/buf) against `protocall registry serve` over https with a test
// CA: buf push (with and without --create, with --label), a multi-module push, buf dep update on a
// chain of modules, buf build and export by label and by commit, buf curl --schema of a module, the
// refusals in buf's own words, a v1 workspace that needs an API the emulator does not serve, and a
// push reaching `protocall listen` as a push event with the commit id buf printed.
//
// buf names the registry by host: modules are `localhost:PORT/owner/module` (buf.yaml v2 accepts a
// port), which buf calls as https://localhost:PORT/...; it trusts the test CA through SSL_CERT_FILE
// and sends BUF_TOKEN (or the ~/.netrc entry that `buf registry login` writes).
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { createWebhookClient } from "../../src/core/webhooks/client";
import { closePostConnections } from "../../src/core/webhooks/http-post";
import { readStoreFile } from "../../src/core/webhooks/store";
import { type CliServer, startCliServer, waitFor } from "../core/webhooks/support";
import { startTestRegistry, type TestRegistry, tempWorkspace } from "../support/registry";
import { accessFor } from "../support/registry-access";
import { examplesDir, startDemoServer } from "../support/servers";
import { createTestPki, type TestPki } from "../support/tls";

let pki: TestPki;
let registry: TestRegistry;
let listener: CliServer;
let storePath: string;

const tiny = {
  "tiny/v1/tiny.proto": 'syntax = "proto3";\n\npackage tiny.v1;\n\nmessage Tiny {}\n',
  LICENSE: "MIT\n",
};

before(async () => {
  pki = await createTestPki(["localhost"]);
  storePath = join(mkdtempSync(join(tmpdir(), "protocall-buf-listen-")), "events.store");
  [registry, listener] = await Promise.all([
    startTestRegistry({ pki, cli: true, trustCa: pki.ca.cert, batchIntervalMs: 200 }),
    startCliServer([
      "listen",
      "--cert",
      pki.server.certPath,
      "--key",
      pki.server.keyPath,
      "--store",
      storePath,
    ]),
  ]);
});

after(async () => {
  closePostConnections();
  await Promise.all([registry?.close(), listener?.stop()]);
});

/** A workspace with one module `acme/<name>` in `proto/`. */
function moduleWorkspace(name: string, files: Record<string, string>, deps: string[] = []): string {
  const ws: Record<string, string> = {
    "buf.yaml": registry.bufYaml([{ path: "proto", name: `acme/${name}` }], deps),
  };
  for (const [path, text] of Object.entries(files)) ws[`proto/${path}`] = text;
  return tempWorkspace(ws);
}

const create = ["push", "--create", "--create-visibility", "private"];

/** The commit id of a `buf push` output line `localhost:PORT/acme/m:<id>`. */
function pushedId(stdout: string, module: string): string {
  const line = stdout.split("\n").find((l) => l.startsWith(`${registry.remote}/${module}:`));
  assert.ok(line, `no line for ${module} in ${JSON.stringify(stdout)}`);
  const id = line.slice(line.lastIndexOf(":") + 1);
  assert.match(id, /^[0-9a-f]{32}$/);
  return id;
}

function ok(r: { code: number; stdout: string; stderr: string }, what: string) {
  assert.equal(r.code, 0, `${what}: exit ${r.code}\n${r.stderr}`);
}

let tinyCommit = "";

test("buf push: a new module needs --create, which makes it; an unchanged push prints the same commit", async () => {
  const ws = moduleWorkspace("tiny", tiny);
  const plain = await registry.buf(["push"], { cwd: ws, token: "alice-token" });
  assert.equal(plain.code, 1);
  assert.equal(plain.stderr.trim(), 'Failure: not_found: module "acme/tiny" was not found');
  const created = await registry.buf(create, { cwd: ws, token: "alice-token" });
  ok(created, "push --create");
  tinyCommit = pushedId(created.stdout, "acme/tiny");
  const again = await registry.buf(["push"], { cwd: ws, token: "bob-token" });
  ok(again, "push again");
  assert.equal(pushedId(again.stdout, "acme/tiny"), tinyCommit);
});

test("buf build and buf export by module, label and commit (dashless and dashed), from a cold cache", async () => {
  const dashed = tinyCommit.replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, "$1-$2-$3-$4-$5");
  for (const ref of ["", ":main", `:${tinyCommit}`, `:${dashed}`]) {
    const out = join(mkdtempSync(join(tmpdir(), "protocall-export-")), "out");
    const exported = await registry.buf(["export", `${registry.remote}/acme/tiny${ref}`, "-o", out], {
      token: "bob-token",
      cacheDir: registry.freshCache(),
    });
    ok(exported, `export${ref}`);
    assert.equal(readFileSync(join(out, "tiny/v1/tiny.proto"), "utf8"), tiny["tiny/v1/tiny.proto"]);
    assert.ok(!existsSync(join(out, "LICENSE")), "buf exports .proto files only");
  }
  const built = await registry.buf(["build", `${registry.remote}/acme/tiny:main`, "-o", "-#format=json"], {
    token: "alice-token",
    cacheDir: registry.freshCache(),
  });
  ok(built, "build");
  assert.equal(JSON.parse(built.stdout).file[0].name, "tiny/v1/tiny.proto");
});

test("buf push --label moves only the labels it names; the default label stays", async () => {
  const v2 = {
    ...tiny,
    "tiny/v1/tiny.proto": tiny["tiny/v1/tiny.proto"].replace("{}", "{\n  string id = 1;\n}"),
  };
  const pushed = await registry.buf(["push", "--label", "v2", "--label", "beta"], {
    cwd: moduleWorkspace("tiny", v2),
    token: "alice-token",
  });
  ok(pushed, "push --label");
  const id = pushedId(pushed.stdout, "acme/tiny");
  assert.notEqual(id, tinyCommit);
  const read = async (ref: string) => {
    const out = join(mkdtempSync(join(tmpdir(), "protocall-export-")), "out");
    ok(
      await registry.buf(["export", `${registry.remote}/acme/tiny${ref}`, "-o", out], {
        token: "alice-token",
      }),
      ref,
    );
    return readFileSync(join(out, "tiny/v1/tiny.proto"), "utf8");
  };
  assert.equal(await read(":v2"), v2["tiny/v1/tiny.proto"]);
  assert.equal(await read(":beta"), v2["tiny/v1/tiny.proto"]);
  assert.equal(await read(":main"), tiny["tiny/v1/tiny.proto"]);
  assert.equal(await read(""), tiny["tiny/v1/tiny.proto"]);
});

test("buf registry module commit list and label list: newest first, pages, --reverse, a label's history, a commit", async () => {
  const version = (n: number) => ({
    "history/v1/history.proto": `syntax = "proto3";\n\npackage history.v1;\n\nmessage V${n} {}\n`,
  });
  const c1 = pushedId(
    (await registry.buf(create, { cwd: moduleWorkspace("history", version(1)), token: "alice-token" }))
      .stdout,
    "acme/history",
  );
  const c2 = pushedId(
    (
      await registry.buf(["push", "--label", "v2"], {
        cwd: moduleWorkspace("history", version(2)),
        token: "alice-token",
      })
    ).stdout,
    "acme/history",
  );
  const c3 = pushedId(
    (await registry.buf(["push"], { cwd: moduleWorkspace("history", version(3)), token: "alice-token" }))
      .stdout,
    "acme/history",
  );
  const module = `${registry.remote}/acme/history`;
  const buf = async (...args: string[]) => {
    const r = await registry.buf(["registry", "module", ...args], { token: "bob-token" });
    ok(r, args.join(" "));
    return r.stdout;
  };
  const json = async (...args: string[]) => JSON.parse(await buf(...args, "--format", "json"));
  assert.equal(await buf("commit", "list", module), `${module}:${c3}\n${module}:${c2}\n${module}:${c1}\n`);
  assert.equal(
    await buf("commit", "list", module, "--reverse"),
    `${module}:${c1}\n${module}:${c2}\n${module}:${c3}\n`,
  );
  const first = await json("commit", "list", module, "--page-size", "2");
  assert.deepEqual(
    first.commits.map((c: { commit: string }) => c.commit),
    [c3, c2],
  );
  const rest = await json("commit", "list", module, "--page-size", "2", "--page-token", first.next_page);
  assert.deepEqual(
    rest.commits.map((c: { commit: string }) => c.commit),
    [c1],
  );
  assert.equal(rest.next_page, undefined, "the last page has no next page");
  // A label: every commit it pointed at, newest first; a commit: itself.
  const main = await json("commit", "list", `${module}:main`);
  assert.deepEqual(
    main.commits.map((c: { commit: string }) => c.commit),
    [c3, c1],
  );
  assert.equal(await buf("commit", "list", `${module}:${c2}`), `${module}:${c2}\n`);
  const labels = await json("label", "list", module);
  assert.deepEqual(labels.labels.map((l: { name: string; commit: string }) => [l.name, l.commit]).sort(), [
    ["main", c3],
    ["v2", c2],
  ]);
  const denied = await registry.buf(["registry", "module", "label", "list", module], {
    token: "carol-token",
  });
  assert.equal(denied.code, 1);
  assert.match(denied.stderr, /permission_denied: user carol has no role on private module acme\/history/);
});

test("a multi-module push: the registry works out that one pushed module imports the other; buf dep update on the chain writes buf.lock", async () => {
  // b imports a, a imports tiny (a remote dependency pinned by buf.lock).
  const ws = tempWorkspace({
    "buf.yaml": registry.bufYaml(
      [
        { path: "b", name: "acme/mb" },
        { path: "a", name: "acme/ma" },
      ],
      ["acme/tiny"],
    ),
    "a/a/v1/a.proto":
      'syntax = "proto3";\n\npackage a.v1;\n\nimport "tiny/v1/tiny.proto";\n\nmessage A {\n  tiny.v1.Tiny t = 1;\n}\n',
    "b/b/v1/b.proto":
      'syntax = "proto3";\n\npackage b.v1;\n\nimport "a/v1/a.proto";\n\nmessage B {\n  a.v1.A a = 1;\n}\n',
  });
  ok(await registry.buf(["dep", "update"], { cwd: ws, token: "alice-token" }), "dep update");
  const pushed = await registry.buf(create, { cwd: ws, token: "alice-token" });
  ok(pushed, "multi-module push");
  const mb = pushedId(pushed.stdout, "acme/mb");
  pushedId(pushed.stdout, "acme/ma");
  // mb builds remotely only if the registry recorded its dependency on the new ma commit.
  const built = await registry.buf(["build", `${registry.remote}/acme/mb:${mb}`, "-o", "-#format=json"], {
    token: "alice-token",
    cacheDir: registry.freshCache(),
  });
  ok(built, "build mb");
  assert.deepEqual((JSON.parse(built.stdout).file as { name: string }[]).map((f) => f.name).sort(), [
    "a/v1/a.proto",
    "b/v1/b.proto",
    "tiny/v1/tiny.proto",
  ]);

  // A consumer of mb: buf dep update resolves the whole chain into buf.lock, sorted by name.
  const consumer = tempWorkspace({
    "buf.yaml": "version: v2\nmodules:\n  - path: proto\n" + `deps:\n  - ${registry.remote}/acme/mb\n`,
    "proto/c/v1/c.proto":
      'syntax = "proto3";\n\npackage c.v1;\n\nimport "b/v1/b.proto";\n\nmessage C {\n  b.v1.B b = 1;\n}\n',
  });
  const cache = registry.freshCache();
  ok(
    await registry.buf(["dep", "update"], { cwd: consumer, token: "bob-token", cacheDir: cache }),
    "dep update",
  );
  const lock = readFileSync(join(consumer, "buf.lock"), "utf8");
  const names = [...lock.matchAll(/- name: (\S+)/g)].map((m) => m[1]);
  assert.deepEqual(
    names,
    ["acme/ma", "acme/mb", "acme/tiny"].map((n) => `${registry.remote}/${n}`),
  );
  assert.match(lock, new RegExp(`commit: ${mb}\\n\\s+digest: b5:[0-9a-f]{128}`));
  assert.equal([...lock.matchAll(/digest: b5:[0-9a-f]{128}/g)].length, 3);
  ok(
    await registry.buf(["build", consumer], { token: "bob-token", cacheDir: registry.freshCache() }),
    "local build",
  );
});

test("buf curl --schema REMOTE/owner/module calls the demo server with the module's schema", async () => {
  const files: Record<string, string> = {};
  const src = join(examplesDir, "proto");
  for (const name of readdirSync(join(src, "demo/v1"))) {
    files[`demo/v1/${name}`] = readFileSync(join(src, "demo/v1", name), "utf8");
  }
  ok(await registry.buf(create, { cwd: moduleWorkspace("demo", files), token: "alice-token" }), "push demo");
  const demo = await startDemoServer({ reflection: false });
  try {
    const res = await registry.buf(
      [
        "curl",
        "--schema",
        `${registry.remote}/acme/demo`,
        "--http2-prior-knowledge",
        "-d",
        '{"name": "registry"}',
        `${demo.url}/demo.v1.GreetService/Greet`,
      ],
      { token: "bob-token", cacheDir: registry.freshCache() },
    );
    ok(res, "buf curl --schema");
    assert.match(JSON.parse(res.stdout).greeting, /registry/);
    const list = await registry.buf(
      ["curl", "--schema", `${registry.remote}/acme/demo:main`, "--list-services"],
      {
        token: "bob-token",
      },
    );
    ok(list, "--list-services");
    assert.match(list.stdout, /demo\.v1\.GreetService/);
  } finally {
    await demo.close();
  }
});

test("refusals in buf's own words: no token, a wrong token, no role, unknown module, unknown label", async () => {
  const ref = `${registry.remote}/acme/tiny`;
  const exportOf = (r: string, token?: string) =>
    registry.buf(["export", r, "-o", mkdtempSync(join(tmpdir(), "protocall-export-"))], { token });
  const none = await exportOf(ref);
  assert.equal(none.code, 1);
  assert.equal(
    none.stderr.trim(),
    `Failure: you are not authenticated for ${registry.remote}. Set the BUF_TOKEN environment variable or run "buf registry login ${registry.remote}", using a Buf API token as the password. For details, visit https://buf.build/docs/bsr/authentication`,
  );
  const wrong = await exportOf(ref, "wrong-token");
  assert.equal(wrong.code, 1);
  assert.equal(
    wrong.stderr.trim(),
    `Failure: the BUF_TOKEN environment variable is not valid for ${registry.remote}. Set BUF_TOKEN to a valid Buf API token, or unset it. For details, visit https://buf.build/docs/bsr/authentication`,
  );
  const noRole = await exportOf(ref, "carol-token");
  assert.equal(noRole.code, 1);
  assert.equal(
    noRole.stderr.trim(),
    'Failure: permission_denied: user carol has no role on private module acme/tiny: add "carol" to its "members" in the registry config',
  );
  const noPush = await registry.buf(["push"], { cwd: moduleWorkspace("tiny", tiny), token: "carol-token" });
  assert.equal(noPush.code, 1);
  assert.match(
    noPush.stderr,
    /^Failure: permission_denied: user carol has no role on private module acme\/tiny/,
  );
  const unknownModule = await exportOf(`${registry.remote}/acme/nope`, "alice-token");
  assert.equal(unknownModule.code, 1);
  assert.equal(unknownModule.stderr.trim(), 'Failure: module "acme/nope" was not found');
  const unknownLabel = await exportOf(`${ref}:v9`, "alice-token");
  assert.equal(unknownLabel.code, 1);
  assert.equal(unknownLabel.stderr.trim(), 'Failure: no commit or label "v9" was found in module acme/tiny');
});

test("tokens as buf takes them: BUF_TOKEN in its token@remote form, and ~/.netrc written by buf registry login", async () => {
  const ws = moduleWorkspace("tiny", tiny);
  const listed = await registry.buf(["push"], {
    cwd: ws,
    env: { BUF_TOKEN: `nope@other.example:1,alice-token@${registry.remote}` },
  });
  ok(listed, "BUF_TOKEN list");
  assert.equal(pushedId(listed.stdout, "acme/tiny"), tinyCommit);
  const home = mkdtempSync(join(tmpdir(), "protocall-buf-home-"));
  const env = { HOME: home, BUF_TOKEN: undefined };
  ok(
    await registry.buf(["registry", "login", registry.remote, "--token-stdin"], {
      env,
      stdin: "bob-token\n",
    }),
    "buf registry login",
  );
  assert.match(readFileSync(join(home, ".netrc"), "utf8"), /bob-token/);
  const viaNetrc = await registry.buf(["push"], { cwd: ws, env });
  ok(viaNetrc, "push with netrc");
  assert.equal(pushedId(viaNetrc.stdout, "acme/tiny"), tinyCommit);
});

test("an API the emulator does not serve: buf's unimplemented message (a buf.yaml v1 dependency uses v1beta1)", async () => {
  const ws = tempWorkspace({
    "buf.yaml": `version: v1\ndeps:\n  - ${registry.remote}/acme/tiny\n`,
    "x/v1/x.proto": 'syntax = "proto3";\n\npackage x.v1;\n',
  });
  const r = await registry.buf(["dep", "update"], { cwd: ws, token: "alice-token" });
  assert.equal(r.code, 1);
  const lines = r.stderr.trim().split("\n");
  assert.match(
    lines[0],
    new RegExp(
      `^Failure: unimplemented: buf\\.registry\\.module\\.v1beta1\\.CommitService/GetCommits is not served by this registry emulator; it serves .* for https://${registry.remote}/buf\\.registry\\.module\\.v1beta1\\.CommitService/GetCommits$`,
    ),
  );
  assert.equal(
    lines[1],
    `This version of the buf CLI may require APIs that have not yet been deployed to https://${registry.remote}`,
  );
});

test("a buf push reaches a running `protocall listen` as a push event with the commit id buf printed", async () => {
  const webhooks = createWebhookClient({
    baseUrl: registry.url,
    access: accessFor(registry.url, "alice-token", pki.ca.cert),
  });
  // The first line `protocall listen` prints is its callback URL.
  await webhooks.createWebhook({ owner: "acme", repository: "tiny", callbackUrl: listener.url });
  const v3 = {
    ...tiny,
    "tiny/v1/tiny.proto": tiny["tiny/v1/tiny.proto"].replace("{}", "{\n  int64 n = 1;\n}"),
  };
  const pushed = await registry.buf(["push", "--label", "v3"], {
    cwd: moduleWorkspace("tiny", v3),
    token: "bob-token",
  });
  ok(pushed, "push");
  const id = pushedId(pushed.stdout, "acme/tiny");
  const delivery = await waitFor(
    () =>
      readStoreFile(storePath).find(
        (d) =>
          (d.event as { payload?: { repositoryPush?: { repositoryCommit?: { id?: string } } } } | undefined)
            ?.payload?.repositoryPush?.repositoryCommit?.id === id,
      ),
    "the push event",
    30_000,
  );
  assert.equal(delivery.status, "accepted");
  const push = (delivery.event as { payload: { repositoryPush: Record<string, Record<string, unknown>> } })
    .payload.repositoryPush;
  assert.equal(push.repositoryCommit.author, "bob");
  assert.deepEqual(
    (push.repositoryCommit.tags as { name: string }[]).map((t) => t.name),
    ["v3"],
  );
  assert.match(push.repositoryCommit.b5Digest as string, /^b5:[0-9a-f]{128}$/);
  assert.equal(push.repository.name, "tiny");
  await waitFor(
    () =>
      registry.process!.lines.some(
        (l) => l.startsWith("delivery #") && l.includes(`commit ${id}`) && l.includes("HTTP 200"),
      ),
    "the delivery in the --verbose log",
  );
  assert.ok(
    registry.process!.lines.some((l) => l.startsWith("Upload acme/tiny by bob: commit ") && l.includes(id)),
  );
});
