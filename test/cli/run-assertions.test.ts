// `protocall run` as a test runner, against the real demo server: `# @assert` on messages, headers,
// trailers and typed error details passing and failing, captures feeding the next request (and the
// request to run first when one has not run), --bail, --var above environments and file variables,
// environments above a file's default host, and the reports: the JUnit file validated against the
// junit-4 XSD (test/fixtures/junit/junit-4.xsd) by libxml2 (xmllint-wasm), the JSON report read back.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { validateXML } from "xmllint-wasm";
import { repoRoot, runCli } from "../support/cli";
import { type DemoServer, startDemoServer } from "../support/servers";

const dir = mkdtempSync(join(tmpdir(), "protocall-run-asserts-"));
let server: DemoServer;

before(async () => {
  server = await startDemoServer();
});

after(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

let n = 0;
/** Writes requests.rpc (HOST replaced by the demo server's URL) and other files into a fresh workspace. */
function workspace(rpc: string, files: Record<string, string> = {}): string {
  const root = join(dir, `ws${++n}`);
  mkdirSync(join(root, ".git"), { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(join(root, name), text);
  writeFileSync(join(root, "requests.rpc"), rpc.replaceAll("HOST", server.url));
  return root;
}

const run = (root: string, args: string[] = []) =>
  runCli(["run", "requests.rpc", ...args], { cwd: root, timeoutMs: 60_000 });

/** stderr with durations replaced by T, as lines. */
const lines = (stderr: string) =>
  stderr
    .trimEnd()
    .replace(/\(\d+ ms\)/g, "(T)")
    .split("\n");

const checks = `@host = HOST

### Stream
# @protocol grpc
# @assert messages.length == 3
# @assert messages[*].number == [1, 2, 3]
# @assert headers["content-type"] == "application/grpc+proto"
# @assert trailers["grpc-status"] == "0"
# @assert messages[0].number == 2
# @assert message.text contains "tock"
{{host}}/demo.v1.DemoService/Count

{"count": 3, "text": "tick"}

### Details
# @assert status == resource_exhausted
# @assert error.details[google.rpc.RetryInfo].retryDelay == "1.500s"
# @assert error.details[demo.v1.QuotaExceeded].limit == 100
# @assert error.details[google.rpc.BadRequest] exists
{{host}}/demo.v1.DemoService/Fail

{"code": "CODE_RESOURCE_EXHAUSTED", "message": "slow down", "details": ["DETAIL_RETRY_INFO", "DETAIL_QUOTA_EXCEEDED"]}

### Zero
# @assert message.sum == 0
# @assert message.count == 1
{{host}}/demo.v1.DemoService/Sum

{"number": 0}
`;

describe("protocall run with assertions", { timeout: 180_000 }, () => {
  test("passing and failing checks on messages, headers, trailers and error details: one line each, a summary, exit 1", async () => {
    const root = workspace(checks);
    const r = await run(root);
    assert.equal(r.code, 1, r.stderr);
    assert.deepEqual(lines(r.stderr), [
      "FAIL Stream (T)",
      "  requests.rpc:9:1: expected messages[0].number == 2, got 1",
      '  requests.rpc:10:1: expected message.text contains "tock", got "tick"',
      "FAIL Details (T)",
      "  requests.rpc:19:1: expected error.details[google.rpc.BadRequest] exists, got nothing (no detail of type google.rpc.BadRequest (the details: google.rpc.RetryInfo, demo.v1.QuotaExceeded))",
      // The error's body, as protocall curl prints it on stderr.
      "  {",
      '     "code": "resource_exhausted",',
      '     "message": "slow down",',
      '     "details": [',
      "        {",
      '           "type": "google.rpc.RetryInfo",',
      '           "value": "CggIARCAyrXuAQ",',
      '           "debug": {',
      '              "retryDelay": "1.500s"',
      "           }",
      "        },",
      "        {",
      '           "type": "demo.v1.QuotaExceeded",',
      '           "value": "CghyZXF1ZXN0cxBkGgIIHg",',
      '           "debug": {',
      '              "resource": "requests",',
      '              "limit": "100",',
      '              "retryAfter": "30s"',
      "           }",
      "        }",
      "     ]",
      "  }",
      "PASS Zero (T)",
      "3 requests: 1 passed, 2 failed; 14 checks, 3 failed (T)",
    ]);
    // The response messages on stdout, as protocall curl prints them (a zero sum is left out there).
    assert.match(r.stdout, /^\{\n {2}"number": 1,\n {2}"text": "tick"\n\}\n/);
    assert.match(r.stdout, /\{\n {2}"count": 1\n\}\n$/);
  });

  test("a capture feeds the next request; a request whose capture has not run names the request to run first", async () => {
    const root = workspace(`@host = HOST
### Log in
# @capture greeting = message.greeting
{{host}}/demo.v1.GreetService/Greet

{"name": "ada"}

### Use it
# @assert message.greeting == "Hello, Hello, ada!!"
{{host}}/demo.v1.GreetService/Greet

{"name": "{{greeting}}"}
`);
    const r = await run(root);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(lines(r.stderr), [
      "PASS Log in (T)",
      "PASS Use it (T)",
      "2 requests: 2 passed; 4 checks (T)",
    ]);

    const alone = await run(root, ["--name", "Use it"]);
    assert.equal(alone.code, 1, alone.stderr);
    assert.equal(alone.stdout, "");
    assert.deepEqual(lines(alone.stderr), [
      "ERROR Use it (T)",
      '  requests.rpc:12:11: {{greeting}} has no value yet: it is captured by request "Log in" (line 3); run that request first',
      "1 request: 0 passed, 1 errored; 0 checks (T)",
    ]);
  });

  test("a capture that finds nothing fails its request, and the request that needs it is not sent", async () => {
    const root = workspace(`@host = HOST
### Log in
# @capture token = message.token
{{host}}/demo.v1.GreetService/Greet

{"name": "ada"}

### Use it
{{host}}/demo.v1.GreetService/Greet
x-token: {{token}}
`);
    const r = await run(root);
    assert.equal(r.code, 1, r.stderr);
    assert.deepEqual(lines(r.stderr), [
      "FAIL Log in (T)",
      '  requests.rpc:3:1: cannot capture token: message.token leads to nothing (message has no member "token"; its members: greeting)',
      "ERROR Use it (T)",
      // It ran: the line says why it took no value, not to run it first.
      '  requests.rpc:10:10: {{token}} has no value: request "Log in" (line 3) ran, but cannot capture token: message.token leads to nothing (message has no member "token"; its members: greeting)',
      "2 requests: 0 passed, 1 failed, 1 errored; 2 checks, 1 failed (T)",
    ]);
  });

  test("--bail stops at the first request that does not pass; the rest are skipped", async () => {
    const root = workspace(`@host = HOST
### One
{{host}}/demo.v1.GreetService/Greet

### Two
{{host}}/demo.v1.DemoService/Fail

{"code": "CODE_NOT_FOUND", "message": "gone"}

### Three
{{host}}/demo.v1.GreetService/Greet
`);
    const all = await run(root);
    assert.equal(all.code, 40, all.stderr);
    assert.match(all.stderr, /\nPASS Three \(\d+ ms\)\n/);
    const r = await run(root, ["--bail"]);
    // An unexpected RPC failure exits as protocall curl would: not_found × 8.
    assert.equal(r.code, 40, r.stderr);
    assert.deepEqual(lines(r.stderr), [
      "PASS One (T)",
      "FAIL Two (T)",
      "  requests.rpc:6:1: expected status == ok, got not_found: gone (assert on status or error to expect a failure)",
      "  {",
      '     "code": "not_found",',
      '     "message": "gone"',
      "  }",
      'SKIP Three (--bail stopped the run at the failure of "Two")',
      "3 requests: 1 passed, 1 failed, 1 skipped; 2 checks, 1 failed (T)",
    ]);
    assert.equal((r.stdout.match(/greeting/g) ?? []).length, 1);
  });

  test("--var ranks above the environment, which ranks above the file's default host", async () => {
    const root = workspace(
      `@host = http://127.0.0.1:1
@name = file
### Greet
# @assert message.greeting == "Hello, {{expected}}!"
{{host}}/demo.v1.GreetService/Greet

{"name": "{{name}}"}
`,
      {
        "protocall.env.json": JSON.stringify({
          $shared: { expected: "file" },
          local: { host: server.url, name: "env", expected: "env" },
        }),
      },
    );
    const fileOnly = await run(root);
    assert.equal(fileOnly.code, 1, fileOnly.stderr);
    assert.match(
      fileOnly.stderr,
      /^ERROR Greet .*\n {2}requests\.rpc:5:1: the call failed: .*127\.0\.0\.1:1/,
    );

    const env = await run(root, ["--env", "local"]);
    assert.equal(env.code, 0, env.stderr);
    assert.equal(env.stdout, '{\n  "greeting": "Hello, env!"\n}\n');

    const vars = await run(root, ["--env", "local", "--var", "name=cli", "--var=expected=cli"]);
    assert.equal(vars.code, 0, vars.stderr);
    assert.equal(vars.stdout, '{\n  "greeting": "Hello, cli!"\n}\n');

    const pointed = await run(root, ["--var", `host=${server.url}`, "--var", "expected=file"]);
    assert.equal(pointed.code, 0, pointed.stderr);
  });

  test("--reporter junit=FILE is valid JUnit XML (the junit-4 XSD) and json=FILE holds every check", async () => {
    const root = workspace(`${checks}
### Down
http://127.0.0.1:1/demo.v1.GreetService/Greet
`);
    const r = await run(root, ["--reporter", "junit=out/junit.xml", "--reporter=json=out/report.json"]);
    // The report directory must exist: a clear error, after the summary.
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /\nprotocall: --reporter junit=out\/junit\.xml: cannot write .*out\/junit\.xml: no such directory\n$/,
    );
    mkdirSync(join(root, "out"));
    const ok = await run(root, ["--reporter", "junit=out/junit.xml", "--reporter=json=out/report.json"]);
    assert.equal(ok.code, 1, ok.stderr);

    const xml = readFileSync(join(root, "out/junit.xml"), "utf8");
    const xsd = readFileSync(join(repoRoot, "test/fixtures/junit/junit-4.xsd"), "utf8");
    const validation = await validateXML({
      xml: [{ fileName: "junit.xml", contents: xml }],
      schema: [{ fileName: "junit-4.xsd", contents: xsd }],
    });
    assert.deepEqual(
      validation.errors.map((e) => e.rawMessage),
      [],
    );
    assert.equal(validation.valid, true);
    assert.match(xml, /<testsuites name="protocall run" tests="4" failures="2" errors="1" /);
    assert.match(xml, /<testcase name="Stream" classname="requests.rpc" time="[\d.]+" assertions="7">/);
    assert.match(
      xml,
      /<failure message="expected messages\[0\]\.number == 2, got 1" type="assertion">requests\.rpc:9:1: /,
    );
    assert.match(xml, /<error message="[^"]*127\.0\.0\.1:1[^"]*" type="error">/);

    // The validator is a real one: a document against the schema's rules is refused.
    const broken = await validateXML({
      xml: [
        { fileName: "junit.xml", contents: xml.replace(/<testsuite name="[^"]*" tests="\d+"/, "<testsuite") },
      ],
      schema: [{ fileName: "junit-4.xsd", contents: xsd }],
    });
    assert.equal(broken.valid, false);

    const json = JSON.parse(readFileSync(join(root, "out/report.json"), "utf8"));
    assert.equal(json.version, 1);
    assert.deepEqual(json.summary, {
      requests: 4,
      passed: 1,
      failed: 2,
      errored: 1,
      skipped: 0,
      durationMs: json.summary.durationMs,
      // The errored request's check did not run.
      checks: { passed: 11, failed: 3, notRun: 1 },
    });
    assert.deepEqual(
      json.requests.map((q: { name: string; verdict: string; status?: string }) => [
        q.name,
        q.verdict,
        q.status,
      ]),
      [
        ["Stream", "failed", "ok"],
        ["Details", "failed", "resource_exhausted"],
        ["Zero", "passed", "ok"],
        ["Down", "errored", undefined],
      ],
    );
    const first = json.requests[0].checks.find((c: { passed: boolean }) => !c.passed);
    assert.deepEqual(first, {
      kind: "assert",
      text: "messages[0].number == 2",
      line: 9,
      column: 1,
      passed: false,
      found: true,
      message: "expected messages[0].number == 2, got 1",
      actual: 1,
    });
  });

  test("bad --var and --reporter values are one-line usage errors", async () => {
    const root = workspace("HOST/demo.v1.GreetService/Greet\n");
    const badVar = await run(root, ["--var", "novalue"]);
    assert.equal(badVar.code, 1);
    assert.match(badVar.stderr, /^protocall: invalid value "novalue" for --var: write NAME=VALUE .*\n$/);
    const badReporter = await run(root, ["--reporter", "xml=out.xml"]);
    assert.equal(badReporter.code, 1);
    assert.match(
      badReporter.stderr,
      /^protocall: invalid value "xml=out.xml" for --reporter: write --reporter junit=FILE .*\n$/,
    );
    const misspelled = await run(root, ["--bial"]);
    assert.equal(misspelled.code, 1);
    assert.match(misspelled.stderr, /^protocall: unknown flag --bial \(did you mean --bail\?\): .*\n$/);
    const noValue = await run(root, ["--reporter"]);
    assert.equal(noValue.code, 1);
    assert.match(
      noValue.stderr,
      /^protocall: flag --reporter needs a value .*: write --reporter KIND=FILE\n$/,
    );
  });

  test("the example file with assertions and a capture passes against the demo server", async () => {
    const example = readFileSync(join(repoRoot, "examples/requests/assertions.rpc"), "utf8");
    assert.match(example, /^@host = http:\/\/127\.0\.0\.1:8080$/m);
    assert.match(example, /^# @capture /m);
    const root = workspace(example);
    const r = await run(root, ["--var", `host=${server.url}`]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /^5 requests: 5 passed; 19 checks \(\d+ ms\)$/m);
    assert.doesNotMatch(r.stderr, /FAIL|ERROR/);
  });
});
