// Parity with `buf curl` for request inputs: headers inline and from files or stdin, request data
// inline, from files or stdin, the combined header-and-data file, credentials (--user, netrc) and the
// user agent. DemoService.Inspect returns the headers the server received, so stdout shows them.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { type DemoServer, startDemoServer } from "../support/servers";
import { assertParity, joinRepeatedHeaders } from "./harness";

const inspect = (names: string[]) => JSON.stringify({ headerNames: names });

describe("parity: headers, data and credentials", { concurrency: 4, timeout: 300_000 }, () => {
  let server: DemoServer;
  let dir: string;
  let home: string;
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  before(async () => {
    server = await startDemoServer();
    dir = mkdtempSync(join(tmpdir(), "protocall-parity-inputs-"));
    home = mkdtempSync(join(tmpdir(), "protocall-parity-home-"));
  });
  after(() => server?.close());

  const url = (method = "Inspect") => `${server.url}/demo.v1.DemoService/${method}`;
  const hostPort = () => new URL(server.url).host;

  test("-H: repeated names, trimming, case", async () => {
    // buf sends a repeated header as separate lines, protocall as one line with the values joined.
    await assertParity(
      [
        "-H",
        "X-A: 1",
        "-H",
        "x-a:2",
        "-H",
        "X-B:   spaced value  ",
        "-H",
        "x-empty-ok: v",
        "-d",
        inspect(["x-a", "x-b", "x-empty-ok"]),
        url(),
      ],
      // buf sends a repeated header as separate lines, protocall as one line with the values joined.
      { code: 0, normalize: joinRepeatedHeaders },
    );
  });

  test("-H: non-ASCII values and values with colons", async () => {
    await assertParity(
      ["-H", "x-u: h\u00e9llo \u2713", "-H", "x-url: http://a:b@c/", "-d", inspect(["x-u", "x-url"]), url()],
      {
        code: 0,
      },
    );
  });

  test("-H @file: comments and blank lines skipped, combined with inline headers", async () => {
    const headers = file("headers.txt", "# a comment\nX-File: one\n\nx-file: two\n  X-Other :  three \n");
    await assertParity(
      ["-H", `@${headers}`, "-H", "x-inline: 4", "-d", inspect(["x-file", "x-other", "x-inline"]), url()],
      { code: 0, normalize: joinRepeatedHeaders },
    );
  });

  test("-H @- reads headers from stdin", async () => {
    await assertParity(["-H", "@-", "-d", inspect(["x-stdin"]), url()], { code: 0, stdin: "x-stdin: yes\n" });
  });

  test("-d @file and -d @- with several documents", async () => {
    const data = file("numbers.json", '{"number": 1}\n{"number": 2}\n\n  {"number": "3"}{"number":4}');
    await assertParity(["-d", `@${data}`, url("Sum")], { code: 0 });
    await assertParity(["-d", "@-", url("Sum")], { code: 0, stdin: '{"number": 5} {"number": 6}' });
    await assertParity(["-d", `@${file("none.json", "")}`, url("Sum")], { code: 0 });
    await assertParity(["-d", "@-", url("Chat")], { code: 0, stdin: '{"text": "a"}\n{"text": "b"}\n' });
    await assertParity(["--protocol", "grpc", "-d", `@${data}`, url("Sum")], { code: 0 });
  });

  test("large messages and long streams", async () => {
    // Thousands of messages each way: seconds on a loaded machine, so more than the default 15 s.
    const long = 90_000;
    const big = file(
      "big.json",
      JSON.stringify({ text: "x".repeat(300_000), data: Buffer.alloc(200_000, 7).toString("base64") }),
    );
    await assertParity(["-d", `@${big}`, url("Echo")], { code: 0, timeoutMs: long });
    await assertParity(["--protocol", "grpc", "-d", `@${big}`, url("Echo")], { code: 0, timeoutMs: long });
    const many = file(
      "many.json",
      Array.from({ length: 2000 }, (_, i) => `{"text": "line ${i}"}`).join("\n"),
    );
    await assertParity(["--protocol", "grpc", "-d", `@${many}`, url("Chat")], { code: 0, timeoutMs: long });
    await assertParity(["--protocol", "grpcweb", "-d", '{"count": 2000, "text": "t"}', url("Count")], {
      code: 0,
      timeoutMs: long,
    });
  });

  test("the same file for headers and data: headers, an empty line, the body", async () => {
    const both = file("request.txt", `x-combined: 1\nX-Combined: 2\n\n${inspect(["x-combined"])}\n`);
    await assertParity(["-H", `@${both}`, "-d", `@${both}`, url()], {
      code: 0,
      normalize: joinRepeatedHeaders,
    });
    const stream = file("stream.txt", 'x-s: 1\n\n{"text": "a"}\n{"text": "b"}\n');
    await assertParity(["-H", `@${stream}`, "-d", `@${stream}`, url("Chat")], { code: 0 });
    await assertParity(["-H", "@-", "-d", "@-", url()], {
      code: 0,
      stdin: `x-stdin: 1\n\n${inspect(["x-stdin"])}`,
    });
  });

  test("input errors exit 1", async () => {
    const noSeparator = file("no-separator.txt", "x-a: 1\n");
    await assertParity(["-H", `@${noSeparator}`, "-d", `@${noSeparator}`, url()], { code: 1 });
    await assertParity(["-d", `@${join(dir, "missing.json")}`, url()], { code: 1 });
    await assertParity(["-H", `@${join(dir, "missing.txt")}`, url()], { code: 1 });
    await assertParity(["-d", "@", url()], { code: 1 });
    await assertParity(["-d", `@${file("empty.json", "")}`, url("Echo")], { code: 1 });
    await assertParity(["-d", `@${file("blank.json", " \n")}`, url("Count")], { code: 1 });
    await assertParity(["-H", "no colon", url()], { code: 1 });
    await assertParity(["-H", "Content-Type: application/json", url()], { code: 1 });
    await assertParity(["-H", "grpc-timeout: 1S", url()], { code: 1 });
    await assertParity(["-H", "Connect-Protocol-Version: 1", url()], { code: 1 });
    await assertParity(["-H", "*", url()], { code: 1 });
    await assertParity(["-H", "@-", "-d", "@-", url()], { code: 1, stdin: "x-a: 1\n" });
  });

  test("--user sends basic authorization; an Authorization header wins", async () => {
    const names = inspect(["authorization"]);
    await assertParity(["-u", "ada:s3cret:with:colons", "-d", names, url()], { code: 0 });
    await assertParity(["--user", "ada:", "-d", names, url()], { code: 0 });
    await assertParity(["-u", "ada:pw", "-H", "Authorization: Bearer t", "-d", names, url()], { code: 0 });
    await assertParity(["-u", "ada", "-d", names, url()], { code: 1 });
  });

  test("netrc: --netrc-file and -n match the host including the port, then default", async () => {
    const names = inspect(["authorization"]);
    const exact = file(
      "exact.netrc",
      `machine 127.0.0.1 login nope password nope\nmachine ${hostPort()} login ada password pw\n`,
    );
    await assertParity(["--netrc-file", exact, "-d", names, url()], { code: 0 });
    const fallback = file(
      "default.netrc",
      "machine other.example login x password y\ndefault login dflt password d\n",
    );
    await assertParity(["--netrc-file", fallback, "-d", names, url()], { code: 0 });
    writeFileSync(join(home, ".netrc"), `machine ${hostPort()}\n  login home\n  password h\n`);
    await assertParity(["-n", "-d", names, url()], { code: 0, env: { HOME: home, NETRC: undefined } });
    await assertParity(["-n", "-d", names, url()], { code: 0, env: { HOME: home, NETRC: exact } });
    await assertParity(["--netrc-file", exact, "-u", "u:p", "-d", names, url()], { code: 0 });
    await assertParity(["--netrc-file", exact, "-H", "authorization: x", "-d", names, url()], { code: 0 });
    await assertParity(["-n", "--netrc-file", exact, url()], { code: 1 });
  });

  test("-A sets the user agent; a User-Agent header wins", async () => {
    const names = inspect(["user-agent"]);
    await assertParity(["-A", "my-agent/1.0", "-d", names, url()], { code: 0 });
    await assertParity(["-A", "my-agent/1.0", "-H", "User-Agent: header/2", "-d", names, url()], { code: 0 });
  });

  test("a Host header sets the authority", async () => {
    await assertParity(["-H", "Host: example.com", "-d", inspect(["host"]), url()], { code: 0 });
    await assertParity(["--schema", "examples", "-H", "Host: example.com", "-d", inspect(["host"]), url()], {
      code: 0,
    });
  });

  test("reflection requests: --reflect-header, *, @file, credentials and the user agent", async () => {
    // This server sees only these runs, one at a time, so Inspect's "latest reflection request" is ours.
    const own = await startDemoServer();
    try {
      const names = (extra: string[] = []) =>
        JSON.stringify({
          headerNames: ["none"],
          reflectionHeaderNames: ["x-a", "x-r", "authorization", "user-agent", ...extra],
        });
      const call = `${own.url}/demo.v1.DemoService/Inspect`;
      const reflectFile = file("reflect-headers.txt", "# for reflection\nx-r: from-file\n");
      const cases = [
        ["-H", "x-a: 1", "-A", "agent/1"],
        ["-H", "x-a: 1", "--reflect-header", "x-r: 2", "-A", "agent/1"],
        ["-H", "x-a: 1", "-H", "x-b: 3", "--reflect-header", "*", "-A", "agent/1"],
        ["--reflect-header", `@${reflectFile}`, "-A", "agent/1"],
        ["-u", "ada:pw", "-A", "agent/1"],
        ["-u", "ada:pw", "--reflect-header", "Authorization: Bearer reflect", "-A", "agent/1"],
        ["-H", "Authorization: Bearer call", "-A", "agent/1"],
        ["-H", "User-Agent: call-agent", "--reflect-header", "*"],
      ];
      for (const args of cases) {
        await assertParity([...args, "-d", names(["x-b"]), call], { code: 0, sequential: true });
      }
    } finally {
      await own.close();
    }
  });

  test("connection flags: timeouts and keepalive", async () => {
    const data = inspect(["none"]);
    await assertParity(["--connect-timeout", "5", "--keepalive-time", "30", "-d", data, url()], { code: 0 });
    await assertParity(["--connect-timeout=2.5", "--no-keepalive", "-d", data, url()], { code: 0 });
    await assertParity(["--timeout", "1m30s", "-d", data, url()], { code: 0 });
    await assertParity(["--no-keepalive", "--keepalive-time", "5", url()], { code: 1 });
    await assertParity(["--connect-timeout", "-1", url()], { code: 1 });
    await assertParity(["--keepalive-time", "0", url()], { code: 1 });
    await assertParity(["--timeout", "soon", url()], { code: 1 });
    await assertParity(["--connect-timeout", "x", url()], { code: 1 });
  });

  test("flag errors exit 1", async () => {
    await assertParity(["--no-such-flag", url()], { code: 1 });
    await assertParity(["--protocol", "soap", url()], { code: 1 });
    await assertParity(["--reflect-protocol", "grpc-v2", url()], { code: 1 });
    await assertParity(["--list-services", "--list-methods", server.url], { code: 1 });
    await assertParity(["--cacert", "ca.pem", url()], { code: 1 });
    await assertParity(["-k", url()], { code: 1 });
    await assertParity(["--cert", "c.pem", "https://127.0.0.1:1/a.B/C"], { code: 1 });
    await assertParity(["--reflect=false", url()], { code: 1 });
    await assertParity(["--reflect=false", "--reflect-header", "x: 1", "--schema", "examples", url()], {
      code: 1,
    });
    await assertParity(["--http3", url()], { code: 1 });
    await assertParity(["ftp://127.0.0.1/a.B/C"], { code: 1 });
    await assertParity([`${server.url}/`], { code: 1 });
    await assertParity([], { code: 1 });
  });
});
