// `protocall curl` inputs end to end: the built CLI against the demo server on loopback. Headers,
// credentials (--user, netrc, the password prompt's absence), user agent, request data from inline
// JSON, files, stdin and combined header/data files.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { runBufCurl } from "../support/buf";
import { cliPath, runCli } from "../support/cli";
import { type DemoServer, startDemoServer } from "../support/servers";

let server: DemoServer;
const dir = mkdtempSync(join(tmpdir(), "protocall-curl-inputs-"));
const home = join(dir, "home");

before(async () => {
  server = await startDemoServer();
  mkdirSync(home);
});
after(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

const basic = (s: string) => `Basic ${Buffer.from(s).toString("base64")}`;

function curl(args: string[], stdin?: string) {
  return runCli(["curl", ...args], {
    cwd: dir,
    stdin,
    env: { HOME: home, NETRC: undefined },
    timeoutMs: 20_000,
  });
}

/** Calls Inspect and returns the request headers the server saw, as name → values. */
async function seenHeaders(args: string[], names: string[]): Promise<Record<string, string[]>> {
  const r = await curl([
    ...args,
    "-d",
    JSON.stringify({ headerNames: names }),
    `${server.url}/demo.v1.DemoService/Inspect`,
  ]);
  assert.equal(r.code, 0, r.stderr);
  const out: Record<string, string[]> = {};
  for (const h of JSON.parse(r.stdout).headers ?? []) (out[h.name] ??= []).push(h.value);
  return out;
}

function failsWith(r: { code: number; stdout: string; stderr: string }, pattern: RegExp) {
  assert.equal(r.code, 1, r.stderr);
  assert.equal(r.stdout, "");
  assert.match(r.stderr, /^protocall: [^\n]+\n$/);
  assert.match(r.stderr, pattern);
}

describe("protocall curl inputs", { concurrency: 4 }, () => {
  it("sends header values with commas unsplit", async () => {
    const h = await seenHeaders(
      ["-H", "Accept-Language: en, fr", "-H", "x-list: a,b,c"],
      ["accept-language", "x-list"],
    );
    assert.deepEqual(h["accept-language"], ["en, fr"]);
    assert.deepEqual(h["x-list"], ["a,b,c"]);
  });

  it("reads headers from a file", async () => {
    writeFileSync(join(dir, "headers.txt"), "# tracing\r\nx-trace: 42\r\n\r\nx-tenant: acme\r\n");
    const h = await seenHeaders(["-H", "@headers.txt"], ["x-trace", "x-tenant"]);
    assert.deepEqual(h, { "x-tenant": ["acme"], "x-trace": ["42"] });
  });

  it("sends --user as basic authorization, and an Authorization header wins", async () => {
    assert.deepEqual((await seenHeaders(["-u", "ada:s3cret"], ["authorization"])).authorization, [
      basic("ada:s3cret"),
    ]);
    const h = await seenHeaders(["-u", "ada:s3cret", "-H", "Authorization: Bearer tok"], ["authorization"]);
    assert.deepEqual(h.authorization, ["Bearer tok"]);
  });

  it("sends -A, and a User-Agent header wins", async () => {
    assert.deepEqual((await seenHeaders(["-A", "mine/1.0"], ["user-agent"]))["user-agent"], ["mine/1.0"]);
    const h = await seenHeaders(["-A", "mine/1.0", "-H", "User-Agent: header/2.0"], ["user-agent"]);
    assert.deepEqual(h["user-agent"], ["header/2.0"]);
  });

  it("sends netrc credentials for the host including the port", async () => {
    const host = new URL(server.url).host;
    writeFileSync(
      join(dir, "netrc"),
      `machine 127.0.0.1 login wrong password x\nmachine ${host} login ada password fromfile\n`,
    );
    writeFileSync(join(home, ".netrc"), `machine ${host} login ada password fromhome\n`);
    assert.deepEqual((await seenHeaders(["--netrc-file", "netrc"], ["authorization"])).authorization, [
      basic("ada:fromfile"),
    ]);
    assert.deepEqual((await seenHeaders(["-n"], ["authorization"])).authorization, [basic("ada:fromhome")]);
    assert.deepEqual((await seenHeaders(["-n", "-u", "bob:pw"], ["authorization"])).authorization, [
      basic("bob:pw"),
    ]);
  });

  it("goes on without credentials when netrc has no entry for the host, saying so with -v", async () => {
    writeFileSync(join(dir, "other-netrc"), "machine elsewhere login a password b\n");
    assert.deepEqual(await seenHeaders(["--netrc-file", "other-netrc"], ["authorization"]), {});
    const host = new URL(server.url).host;
    const r = await curl(["--netrc-file", "other-netrc", "-v", `${server.url}/demo.v1.DemoService/Inspect`]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stderr,
      new RegExp(
        `^protocall: \\* Couldn't find host ${host.replaceAll(".", "\\.")} in the file "other-netrc"; using no credentials\n`,
      ),
    );
  });

  it("fails for --user without a password when stdin is not a terminal", async () => {
    const r = await curl(["-u", "ada", `${server.url}/demo.v1.DemoService/Inspect`]);
    failsWith(r, /cannot prompt for the password of --user ada: standard input is not a terminal/);
  });

  it("prompts for the --user password on a terminal, without echo", async () => {
    const url = `${server.url}/demo.v1.DemoService/Inspect`;
    const data = JSON.stringify({ headerNames: ["authorization"] });
    const command = [process.execPath, cliPath, "curl", "-u", "ada", "-d", `'${data}'`, url].join(" ");
    const child = spawn("script", ["-q", "-e", "-c", command, "/dev/null"], { cwd: dir, stdio: "pipe" });
    let output = "";
    let typed = false;
    const done = new Promise<number>((ok, fail) => {
      const timer = setTimeout(() => {
        child.kill("SIGKILL");
        fail(new Error(`no answer; output so far: ${JSON.stringify(output)}`));
      }, 15_000);
      child.on("close", (code) => {
        clearTimeout(timer);
        ok(code ?? -1);
      });
    });
    child.stdout.on("data", (d: Buffer) => {
      output += d.toString();
      if (!typed && output.includes("Enter host password for user 'ada': ")) {
        typed = true;
        child.stdin.write("typed-secret\r");
      }
    });
    assert.equal(await done, 0, output);
    assert.ok(!output.includes("typed-secret"), `the password was echoed: ${output}`);
    assert.ok(output.includes(basic("ada:typed-secret")), output);
  });

  it("streams requests from a file to a client-streaming method", async () => {
    const lines: string[] = [];
    for (let i = 1; i <= 1000; i++) lines.push(i % 2 ? `{"number": ${i}}` : `{"number":"${i}"}`);
    writeFileSync(join(dir, "numbers.json"), lines.join("\n"));
    const r = await curl(["-d", "@numbers.json", `${server.url}/demo.v1.DemoService/Sum`]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), { sum: "500500", count: 1000 });
  });

  it("reads headers and data from stdin (CRLF), headers first", async () => {
    const stdin = 'x-a: 1\r\n\r\n{"number": 1}\r\n{"number": 2}{"number": 3}\r\n';
    const r = await curl(["-H", "@-", "-d", "@-", `${server.url}/demo.v1.DemoService/Sum`], stdin);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), { sum: "6", count: 3 });
  });

  it("sends no message for an empty data file on a client stream", async () => {
    writeFileSync(join(dir, "empty.json"), "");
    const r = await curl(["-d", "@empty.json", `${server.url}/demo.v1.DemoService/Sum`]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "{}\n");
  });

  it("reports invalid request data with file, line and column", async () => {
    writeFileSync(join(dir, "bad.json"), '{"number": 1}\n{"number": }\n');
    const r = await curl(["-d", "@bad.json", `${server.url}/demo.v1.DemoService/Sum`]);
    failsWith(r, /^protocall: bad\.json:2:12: invalid JSON in request message #2/);
  });

  it("reports binary request data", async () => {
    writeFileSync(join(dir, "binary.dat"), Buffer.from([0x08, 0x96, 0x01]));
    const r = await curl(["-d", "@binary.dat", `${server.url}/demo.v1.DemoService/Sum`]);
    failsWith(r, /binary\.dat:1.*not (JSON|UTF-8) text/);
  });

  it("reports a missing data file", async () => {
    const r = await curl(["-d", "@missing.json", `${server.url}/demo.v1.DemoService/Sum`]);
    failsWith(r, /--data @missing\.json: cannot read .*missing\.json: no such file/);
  });
});

describe("protocall curl inputs match buf curl", { concurrency: 4 }, () => {
  async function same(args: string[], stdin?: string) {
    const full = [...args];
    const options = { cwd: dir, stdin, env: { HOME: home, NETRC: undefined }, timeoutMs: 20_000 };
    const [ours, theirs] = await Promise.all([runCli(["curl", ...full], options), runBufCurl(full, options)]);
    assert.equal(ours.code, theirs.code, `exit codes differ; ours: ${ours.stderr} buf: ${theirs.stderr}`);
    assert.equal(ours.stdout, theirs.stdout);
    return ours;
  }
  const inspect = (names: string[]) => ["-d", JSON.stringify({ headerNames: names })];

  it("headers from a file and inline; connection headers accepted and left out", async () => {
    writeFileSync(join(dir, "parity-headers.txt"), "# c\nx-a: 1\n\nx-b:  two words  \n");
    const r = await same([
      "-H",
      "@parity-headers.txt",
      "-H",
      "x-c: 3",
      "-H",
      "Connection: close",
      "-H",
      "Keep-Alive: 5",
      "-H",
      "Content-Length: 1",
      "-H",
      "x-utf8: é😀",
      ...inspect(["x-a", "x-b", "x-c", "connection", "keep-alive", "x-utf8"]),
      `${server.url}/demo.v1.DemoService/Inspect`,
    ]);
    assert.equal(r.code, 0, r.stderr);
  });

  it("--user, -A and their precedence", async () => {
    const url = `${server.url}/demo.v1.DemoService/Inspect`;
    await same(["-u", "ada:pw", "-A", "client/1", ...inspect(["authorization", "user-agent"]), url]);
    await same(["-u", "ada:pw", "-H", "Authorization: Bearer t", ...inspect(["authorization"]), url]);
    await same(["-A", "client/1", "-H", "User-Agent: h/2", ...inspect(["user-agent"]), url]);
  });

  it("-n without a netrc file, and --netrc-file that is missing, a directory or without an entry: no credentials", async () => {
    const bare = join(dir, "home-without-netrc");
    mkdirSync(bare, { recursive: true });
    writeFileSync(join(dir, "parity-no-entry"), "machine elsewhere login a password b\n");
    const url = `${server.url}/demo.v1.DemoService/Inspect`;
    for (const args of [
      ["-n"],
      ["--netrc-file", "missing-netrc"],
      ["--netrc-file", "home"],
      ["--netrc-file", "parity-no-entry"],
    ]) {
      const options = { cwd: dir, env: { HOME: bare, NETRC: undefined }, timeoutMs: 20_000 };
      const full = [...args, ...inspect(["authorization"]), url];
      const [ours, theirs] = await Promise.all([
        runCli(["curl", ...full], options),
        runBufCurl(full, options),
      ]);
      assert.equal(theirs.code, 0, `buf: ${theirs.stderr}`);
      assert.equal(ours.code, 0, `${args.join(" ")}: ${ours.stderr}`);
      assert.equal(ours.stdout, theirs.stdout);
    }
  });

  it("--netrc-file by host and port", async () => {
    const host = new URL(server.url).host;
    writeFileSync(
      join(dir, "parity-netrc"),
      `machine 127.0.0.1 login no password x\nmachine ${host} login ada password pw\n`,
    );
    await same([
      "--netrc-file",
      "parity-netrc",
      ...inspect(["authorization"]),
      `${server.url}/demo.v1.DemoService/Inspect`,
    ]);
  });

  it("a combined header and data file, and the same on stdin", async () => {
    writeFileSync(join(dir, "parity-both.txt"), 'x-a: 1\n\n{"number": 1}\n{"number": "2"}{"number":3}\n');
    const url = `${server.url}/demo.v1.DemoService/Sum`;
    const r = await same(["-H", "@parity-both.txt", "-d", "@parity-both.txt", url]);
    assert.deepEqual(JSON.parse(r.stdout), { sum: "6", count: 3 });
    await same(["-H", "@-", "-d", "@-", url], 'x-a: 1\n\n{"number": 5}\n');
  });

  it("an empty data file on a client stream, and on a unary method", async () => {
    writeFileSync(join(dir, "parity-empty.json"), "");
    await same(["-d", "@parity-empty.json", `${server.url}/demo.v1.DemoService/Sum`]);
    const r = await same(["-d", "@parity-empty.json", `${server.url}/demo.v1.GreetService/Greet`]);
    assert.equal(r.code, 1);
  });

  it("invalid, unclosed and binary request data", async () => {
    writeFileSync(join(dir, "parity-bad.json"), '{"number": 1}\n{"number": }\n');
    writeFileSync(join(dir, "parity-bin.dat"), Buffer.from([0x08, 0x96, 0x01]));
    const url = `${server.url}/demo.v1.DemoService/Sum`;
    assert.equal((await same(["-d", "@parity-bad.json", url])).code, 1);
    assert.equal((await same(["-d", "@parity-bin.dat", url])).code, 1);
    assert.equal((await same(["-d", '{"number": 1', url])).code, 1);
  });
});
