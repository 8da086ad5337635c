// protocall curl as a user runs it: the built bundle (dist/cli.js) as a child process.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { type DemoServer, startDemoServer } from "../../src/demo/server";

const cli = join(__dirname, "..", "..", "dist", "cli.js");
let server: DemoServer;

before(async () => {
  server = await startDemoServer();
});
after(async () => {
  await server.close();
});

function run(args: string[], stdin = ""): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, "curl", ...args], { stdio: "pipe" });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill(), 15000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(stdin);
  });
}

test("unary call through reflection", async () => {
  const r = await run(["-d", '{"name":"cli"}', `${server.url}/demo.v1.GreetService/Greet`]);
  assert.equal(r.stderr, "");
  assert.equal(r.stdout, '{\n  "greeting": "Hello, cli!"\n}\n');
  assert.equal(r.code, 0);
});

test("an RPC error exits with the gRPC code times eight", async () => {
  const r = await run([
    "-d",
    '{"code":"CODE_PERMISSION_DENIED","message":"no"}',
    `${server.url}/demo.v1.DemoService/Fail`,
  ]);
  assert.equal(r.code, 56);
  assert.equal(r.stderr, '{\n   "code": "permission_denied",\n   "message": "no"\n}\n');
});

test("usage and validation errors are one line and exit 1", async () => {
  const unknown = await run(["--nope", `${server.url}/demo.v1.GreetService/Greet`]);
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /^protocall: unknown flag --nope.*\n$/);
  const tls = await run(["--cacert", "ca.pem", `${server.url}/demo.v1.GreetService/Greet`]);
  assert.equal(tls.code, 1);
  assert.match(tls.stderr, /^protocall: [^\n]*--cacert[^\n]*\n$/);
});

test("--help prints the flags", async () => {
  const r = await run(["--help"]);
  assert.equal(r.code, 0);
  assert.match(r.stdout, /--http2-prior-knowledge/);
});

test("bidi stream from stdin prints each response before stdin ends", async () => {
  const child: ChildProcess = spawn(
    process.execPath,
    [cli, "curl", "-d", "@-", `${server.url}/demo.v1.DemoService/Chat`],
    { stdio: "pipe" },
  );
  const timer = setTimeout(() => child.kill(), 15000);
  try {
    let stdout = "";
    const closed = new Promise<number | null>((resolve) => child.on("close", resolve));
    // Fails (instead of waiting forever) when the command ends without printing `text`.
    const got = (text: string) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (stdout.includes(text)) {
            child.stdout?.off("data", onData);
            resolve();
          }
        };
        const onData = (d: Buffer) => {
          stdout += d;
          check();
        };
        child.stdout?.on("data", onData);
        check();
        closed.then((code) => reject(new Error(`exited (${code}) before printing ${text}: ${stdout}`)));
      });
    child.stdin?.write('{"text":"first"}\n');
    await got('"first"');
    child.stdin?.end('{"text":"second"}\n');
    await got('"second"');
    assert.equal(await closed, 0);
    assert.equal(
      stdout,
      '{\n  "text": "first",\n  "number": 1\n}\n{\n  "text": "second",\n  "number": 2\n}\n',
    );
  } finally {
    clearTimeout(timer);
    child.kill();
  }
});

test("bin/protocall.js runs the bundle with a code cache, and gives the same output from the cache", async () => {
  const { mkdtempSync, readdirSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const cacheDir = mkdtempSync(join(tmpdir(), "protocall-code-cache-"));
  const bin = join(__dirname, "..", "..", "bin", "protocall.js");
  const runBin = (env: NodeJS.ProcessEnv) =>
    new Promise<{ code: number | null; stdout: string }>((resolve, reject) => {
      const child = spawn(
        process.execPath,
        [bin, "curl", "-d", '{"name":"bin"}', `${server.url}/demo.v1.GreetService/Greet`],
        {
          stdio: ["ignore", "pipe", "inherit"],
          env: { ...process.env, PROTOCALL_CACHE_DIR: cacheDir, ...env },
        },
      );
      let stdout = "";
      child.stdout.on("data", (d) => (stdout += d));
      const timer = setTimeout(() => child.kill(), 15000);
      child.on("error", reject);
      child.on("close", (code) => {
        clearTimeout(timer);
        resolve({ code, stdout });
      });
    });
  const expected = '{\n  "greeting": "Hello, bin!"\n}\n';
  const first = await runBin({});
  assert.equal(first.stdout, expected);
  assert.equal(first.code, 0);
  assert.equal(readdirSync(cacheDir).filter((f) => f.endsWith("-curl.cache")).length, 1, "cache written");
  const second = await runBin({});
  assert.equal(second.stdout, expected);
  const uncached = await runBin({ PROTOCALL_NO_CODE_CACHE: "1" });
  assert.equal(uncached.stdout, expected);
});

test("-o FILE on a fast stream of large messages waits for the file without piling up listeners", async () => {
  const { mkdtempSync, readFileSync, rmSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const dir = mkdtempSync(join(tmpdir(), "protocall-curl-output-"));
  try {
    const out = join(dir, "out.json");
    const text = "x".repeat(20_000);
    const r = await run([
      "-o",
      out,
      "-d",
      JSON.stringify({ count: 2000, text }),
      `${server.url}/demo.v1.DemoService/Count`,
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, "");
    assert.equal(r.stdout, "");
    const written = readFileSync(out, "utf8");
    assert.equal((written.match(/"number"/g) ?? []).length, 2000);
    assert.ok(written.endsWith(`"number": 2000,\n  "text": "${text}"\n}\n`));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a closed output pipe ends the call quietly (exit 141, as a SIGPIPE)", async () => {
  const child = spawn(
    process.execPath,
    [cli, "curl", "-d", '{"count":200000}', `${server.url}/demo.v1.DemoService/Count`],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  const timer = setTimeout(() => child.kill(), 60000);
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  child.stdout.once("data", () => child.stdout.destroy());
  const code = await new Promise((resolve) => child.on("close", resolve));
  clearTimeout(timer);
  assert.equal(stderr, "");
  assert.equal(code, 141);
});

test("a reflection failure from a TLS alert is one line in Go's words", async () => {
  const { createTestPki } = await import("../support/tls");
  const pki = await createTestPki();
  const mtls = await startDemoServer({
    tls: { cert: pki.server.cert, key: pki.server.key, ca: pki.ca.cert, requestClientCert: true },
  });
  try {
    const r = await run(["--cacert", pki.ca.certPath, `${mtls.url}/demo.v1.GreetService/Greet`]);
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /^protocall: server reflection failed: .*remote error: tls: certificate required.*\n$/,
    );
    assert.equal(r.stderr.split("\n").length, 2);
  } finally {
    await mtls.close();
  }
});
