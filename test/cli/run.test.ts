import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { repoRoot, runCli } from "../support/cli";
import { type DemoServer, startDemoServer } from "../support/servers";

const dir = mkdtempSync(join(tmpdir(), "protocall-run-"));
let server: DemoServer;
let closedPort: number;

before(async () => {
  server = await startDemoServer();
  // A port with nothing listening: bind, note it, close.
  closedPort = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
});

after(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

let n = 0;
/** Writes a .rpc file (and other files) into a fresh directory with a .git marker; returns the file. */
function workspace(rpc: string, files: Record<string, string> = {}): { file: string; root: string } {
  const root = join(dir, `ws${++n}`);
  mkdirSync(join(root, ".git"), { recursive: true });
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(root, name, ".."), { recursive: true });
    writeFileSync(join(root, name), text);
  }
  const file = join(root, "requests.rpc");
  writeFileSync(file, rpc.replaceAll("HOST", server.url));
  return { file, root };
}

const run = (args: string[], env: Record<string, string> = {}) =>
  runCli(["run", ...args], { cwd: dir, env, timeoutMs: 30_000 });

describe("protocall run", { timeout: 120_000 }, () => {
  test("a file of many requests writes them all to one stdout without piling up listeners (no MaxListenersExceededWarning)", async () => {
    const count = 12;
    const { file } = workspace(
      Array.from(
        { length: count },
        (_, i) => `### Greet ${i}\nHOST/demo.v1.GreetService/Greet\n\n{"name": "n${i}"}\n`,
      ).join("\n"),
    );
    const r = await run([file]);
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /Warning/);
    assert.equal((r.stdout.match(/"greeting"/g) ?? []).length, count);
    assert.match(
      r.stderr,
      new RegExp(`${count} requests: ${count} passed; ${count} checks \\(\\d+ ms\\)\n$`),
    );
  });

  test("--help explains the command with examples", async () => {
    const r = await run(["--help"]);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /Usage:\n {2}protocall run FILE\.rpc \[flags\]/);
    assert.match(r.stdout, /Examples:\n {2}protocall run requests\.rpc\n/);
    assert.match(r.stdout, /\n {2}--env-file FILE +environment file/);
    const top = await runCli(["--help"]);
    assert.match(top.stdout, /\n {2}run {2,}Run the requests of a \.rpc request file/);
  });

  test("runs every request in order, even after a failure: one line per request and per failed check; the exit code is the first failure's", async () => {
    const { file } = workspace(
      [
        "@host = HOST",
        "### Greet",
        "{{host}}/demo.v1.GreetService/Greet",
        "",
        '{"name": "one"}',
        "### Fail",
        "{{host}}/demo.v1.DemoService/Fail",
        "",
        '{"code": "CODE_NOT_FOUND", "message": "gone"}',
        "### Down",
        `http://127.0.0.1:${closedPort}/demo.v1.GreetService/Greet`,
        "### Again",
        "GRPC {{host}}/demo.v1.GreetService/Greet",
        "",
        '{"name": "two"}',
      ].join("\n"),
    );
    const r = await run([file]);
    assert.equal(r.code, 40, r.stderr);
    assert.equal(r.stdout, '{\n  "greeting": "Hello, one!"\n}\n{\n  "greeting": "Hello, two!"\n}\n');
    const lines = r.stderr
      .trimEnd()
      .replace(/\(\d+ ms\)/g, "(T)")
      .split("\n");
    const shown = file.replace(`${dir}/`, "");
    assert.deepEqual(lines, [
      "PASS Greet (T)",
      "FAIL Fail (T)",
      `  ${shown}:7:1: expected status == ok, got not_found: gone (assert on status or error to expect a failure)`,
      // The error's body, as protocall curl prints it.
      "  {",
      '     "code": "not_found",',
      '     "message": "gone"',
      "  }",
      "ERROR Down (T)",
      `  ${shown}:11:1: the call failed: ${r.stderr.match(/the call failed: (.*)/)?.[1]}`,
      "PASS Again (T)",
      // The check of the call that never got an answer did not run (it did not fail).
      "4 requests: 2 passed, 1 failed, 1 errored; 4 checks, 1 failed, 1 not run (T)",
    ]);
    assert.match(lines[8], /the call failed: .*connection refused/);
  });

  test("a failed call's error body is printed under its request with secrets redacted", async () => {
    const { file } = workspace(
      'HOST/demo.v1.DemoService/Fail\n\n{"code": "CODE_PERMISSION_DENIED", "message": "see https://ada:s3cret@db.example/x", "details": ["DETAIL_ERROR_INFO"]}\n',
    );
    const r = await run([file]);
    assert.equal(r.code, 56, r.stderr);
    assert.match(
      r.stderr,
      /\n {2}\{\n {5}"code": "permission_denied",\n {5}"message": "see https:\/\/ada:\[redacted\]@db\.example\/x",\n {5}"details": \[\n/,
    );
    assert.match(r.stderr, /"type": "google\.rpc\.ErrorInfo"/);
    assert.doesNotMatch(r.stderr, /s3cret/);
  });

  test("against a dead server: every request errored, its checks not run, captures say the call failed", async () => {
    const { file } = workspace(
      [
        `@host = http://127.0.0.1:${closedPort}`,
        "### Greet",
        "# @assert message.greeting exists",
        "# @capture greeting = message.greeting",
        "{{host}}/demo.v1.GreetService/Greet",
        "",
        '{"name": "world"}',
        "### Use it",
        '# @assert message.greeting contains "Hello"',
        "{{host}}/demo.v1.GreetService/Greet",
        "",
        '{"name": "{{greeting}}"}',
        "### Expect no detail",
        "# @assert error.details[google.rpc.ErrorInfo] !exists",
        "{{host}}/demo.v1.DemoService/Fail",
        "",
        "{}",
      ].join("\n"),
    );
    const r = await run([file]);
    const lines = r.stderr
      .trimEnd()
      .replace(/\(\d+ ms\)/g, "(T)")
      .replace(/call failed: .*/g, "call failed: WHY")
      .split("\n");
    const shown = file.replace(`${dir}/`, "");
    assert.deepEqual(lines, [
      "ERROR Greet (T)",
      `  ${shown}:5:1: the call failed: WHY`,
      "ERROR Use it (T)",
      `  ${shown}:12:11: {{greeting}} has no value: request "Greet" (line 4) ran, but its call failed: WHY`,
      "ERROR Expect no detail (T)",
      `  ${shown}:15:1: the call failed: WHY`,
      // Greet's implicit status check, its assertion and capture, and the !exists: none ran.
      "3 requests: 0 passed, 3 errored; 4 checks, 4 not run (T)",
    ]);
    assert.match(r.stderr, /ran, but its call failed: .*connection refused/);
    // The first failure's exit code: a failed dial exits as protocall curl does (unavailable × 8).
    const curl = await runCli([
      "curl",
      "-d",
      "{}",
      `http://127.0.0.1:${closedPort}/demo.v1.GreetService/Greet`,
    ]);
    assert.equal(r.code, curl.code);
    assert.notEqual(r.code, 0);
  });

  test("a file without ### is one request; its output is exactly protocall curl's", async () => {
    const { file } = workspace('HOST/demo.v1.DemoService/Count\n\n{"count": 2, "text": "t"}\n');
    const r = await run([file]);
    assert.equal(r.code, 0, r.stderr);
    const curl = await runCli([
      "curl",
      "-d",
      '{"count": 2, "text": "t"}',
      `${server.url}/demo.v1.DemoService/Count`,
    ]);
    assert.equal(r.stdout, curl.stdout);
    assert.match(
      r.stderr,
      /^PASS request 1 \(line 1\) \(\d+ ms\)\n1 request: 1 passed; 1 check \(\d+ ms\)\n$/,
    );
  });

  test("--name runs the named requests, in the order given; an unknown name lists the known ones", async () => {
    const { file } = workspace(
      '### A\nHOST/demo.v1.GreetService/Greet\n\n{"name": "a"}\n### B\nHOST/demo.v1.GreetService/Greet\n\n{"name": "b"}\n',
    );
    const r = await run([file, "--name", "B", "--name=A"]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, '{\n  "greeting": "Hello, b!"\n}\n{\n  "greeting": "Hello, a!"\n}\n');
    const bad = await run([file, "--name", "C"]);
    assert.equal(bad.code, 1);
    assert.match(
      bad.stderr,
      /^protocall: .*requests\.rpc has no request named "C"; its requests: "A", "B"\n$/,
    );
  });

  test("parse errors print file:line:col and nothing is sent", async () => {
    const { file, root } = workspace(
      [
        "### Writes a file if sent",
        "# @output out.json",
        "HOST/demo.v1.GreetService/Greet",
        "",
        "### Broken",
        "# @timout 5s",
        "HOST/demo.v1.GreetService/Greet",
        "content-type: x",
        "",
        '{"name": }',
      ].join("\n"),
    );
    const r = await run([file]);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, "");
    const shown = file.startsWith(dir) ? file.slice(dir.length + 1) : file;
    assert.deepEqual(r.stderr.trimEnd().split("\n"), [
      `${shown}:6:4: unknown request option @timout (did you mean @timeout?); options are the long flags of \`protocall curl\` without the dashes, such as @protocol grpc or @timeout 5s`,
      `${shown}:8:1: header "content-type" is set by the RPC protocol and may not be given; remove it (use @protocol or a GRPC / GRPC-WEB / CONNECT verb to choose the protocol)`,
      `${shown}:10:10: invalid JSON: ${r.stderr.match(/10:10: invalid JSON: (.*)/)?.[1]}`,
    ]);
    assert.equal(existsSync(join(root, "out.json")), false);
  });

  test("an undefined variable in a later request stops everything before sending", async () => {
    const { file, root } = workspace(
      "### First\n# @output out.json\nHOST/demo.v1.GreetService/Greet\n### Second\nHOST/demo.v1.GreetService/Greet\nx-token: {{token}}\n",
    );
    const r = await run([file]);
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /requests\.rpc:6:10: undefined variable \{\{token\}\}: it is not defined in the file, and no environment is selected/,
    );
    assert.equal(existsSync(join(root, "out.json")), false);
  });

  test("environments: --env selects, the private file overrides, $shared fills in; --env-file names another file", async () => {
    const rpc = '{{host}}/demo.v1.GreetService/Greet\n\n{"name": "{{who}} {{suffix}}"}\n';
    const { file } = workspace(rpc, {
      "protocall.env.json": JSON.stringify({
        $shared: { suffix: "shared" },
        dev: { host: server.url, who: "public" },
      }),
      "protocall.env.private.json": JSON.stringify({ dev: { who: "private" } }),
      "config/other.json": JSON.stringify({ qa: { host: server.url, who: "qa", suffix: "other" } }),
    });
    const dev = await run([file, "--env", "dev"]);
    assert.equal(dev.code, 0, dev.stderr);
    assert.equal(dev.stdout, '{\n  "greeting": "Hello, private shared!"\n}\n');
    const qa = await run([file, "--env=qa", "--env-file", join(file, "../config/other.json")]);
    assert.equal(qa.code, 0, qa.stderr);
    assert.equal(qa.stdout, '{\n  "greeting": "Hello, qa other!"\n}\n');
    const missing = await run([file, "--env", "prod"]);
    assert.equal(missing.code, 1);
    assert.match(
      missing.stderr,
      /^protocall: environment "prod" is not defined in .*protocall\.env\.json; defined: dev\n$/,
    );
  });

  test("$dotenv and $env values, and includes relative to the file", async () => {
    const { file } = workspace(
      '@host = HOST\n{{host}}/demo.v1.DemoService/Sum\nx-key: {{$dotenv KEY}}\n\n{"number": {{$env N}}}\n< data/more.json\n',
      { ".env": "KEY=k\n", "data/more.json": '{"number": 40}' },
    );
    const r = await run([file], { N: "2" });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, '{\n  "sum": "42",\n  "count": 2\n}\n');
  });

  test("an include of a device or FIFO is an error at its line, read no further; the CLI reads outside the workspace", async () => {
    const outside = mkdtempSync(join(tmpdir(), "protocall-run-outside-"));
    writeFileSync(join(outside, "body.json"), '{"name": "outside"}');
    const { file, root } = workspace(
      `### Zero\nHOST/demo.v1.GreetService/Greet\n\n< /dev/zero\n### Pipe\nHOST/demo.v1.GreetService/Greet\n\n< pipe.json`,
    );
    execFileSync("mkfifo", [join(root, "pipe.json")]);
    const r = await run([file]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      r.stderr,
      /requests\.rpc:4:3: cannot read the included file \/dev\/zero: it is a device, not a file/,
    );
    assert.match(
      r.stderr,
      /requests\.rpc:8:3: cannot read the included file .*pipe\.json: it is a FIFO \(named pipe\), not a file/,
    );
    assert.equal(r.stdout, "", "nothing is sent");
    const other = workspace(`HOST/demo.v1.GreetService/Greet\n\n< ${join(outside, "body.json")}\n`);
    const read = await run([other.file]);
    rmSync(outside, { recursive: true, force: true });
    assert.equal(read.code, 0, read.stderr);
    assert.equal(read.stdout, '{\n  "greeting": "Hello, outside!"\n}\n');
  });

  test("warnings are printed and do not stop the run; CRLF files and # @name work", async () => {
    const { file } = workspace(
      '### Same\r\nHOST/demo.v1.GreetService/Greet\r\n\r\n{"name": "crlf"}\r\n### Same\r\nHOST/demo.v1.GreetService/Greet\r\n# @timeout 1s\r\n###\r\n# @name Other\r\nHOST/demo.v1.GreetService/Greet\r\n',
    );
    const r = await run([file]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(
      r.stdout,
      '{\n  "greeting": "Hello, crlf!"\n}\n{\n  "greeting": "Hello, world!"\n}\n{\n  "greeting": "Hello, world!"\n}\n',
    );
    assert.match(r.stderr, /requests\.rpc:5:5: warning: another request is also named "Same" \(line 1\)/);
    assert.match(r.stderr, /requests\.rpc:7:1: warning: request options go before the request line/);
    assert.match(r.stderr, /\nPASS Other \(\d+ ms\)\n/);
    assert.match(r.stderr, /3 requests: 3 passed; 3 checks \(\d+ ms\)\n$/);
    const other = await run([file, "--name", "Other"]);
    assert.equal(other.code, 0, other.stderr);
    assert.equal(other.stdout, '{\n  "greeting": "Hello, world!"\n}\n');
  });

  test("the example request file runs against the demo server", async () => {
    const example = readFileSync(join(repoRoot, "examples/requests/demo.rpc"), "utf8");
    assert.match(example, /^@host = http:\/\/127\.0\.0\.1:8080$/m);
    const { file } = workspace(example.replace(/^@host = .*$/m, "@host = HOST"));
    const r = await run([file]);
    // Its error example asserts the error it expects: the whole file passes.
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /\n8 requests: 8 passed; 11 checks \(\d+ ms\)\n$/);
    assert.match(
      r.stderr,
      /\nPASS An error with details \(exit code 40\) \(\d+ ms\)\n {2}\{\n {5}"code": "not_found",/,
    );
    assert.match(r.stdout, /"greeting": "Hello, world!"/);
    assert.match(r.stdout, /"sum": "42"/);
    assert.match(r.stdout, /^demo\.v1\.DemoService\ndemo\.v1\.GreetService\n/m);
  });

  test("usage errors: no file, a missing file, an unknown flag, a file without requests", async () => {
    const none = await run([]);
    assert.equal(none.code, 1);
    assert.match(none.stderr, /no request file given/);
    const missing = await run([join(dir, "nope.rpc")]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /^protocall: cannot read .*nope\.rpc: no such file\n$/);
    const flag = await run(["x.rpc", "--bogus"]);
    assert.equal(flag.code, 1);
    assert.match(flag.stderr, /unknown flag --bogus/);
    const { file } = workspace("# only comments\n");
    const empty = await run([file]);
    assert.equal(empty.code, 1);
    assert.match(empty.stderr, /holds no request/);
  });
});
