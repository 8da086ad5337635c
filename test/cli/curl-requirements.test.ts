// Requirements of `protocall curl` not covered elsewhere, checked with the built CLI against real
// servers on loopback: TCP keepalive as the client socket really has it, --connect-timeout bounding
// only the connection setup, a server that never answers with --timeout, reflection requests with the
// call's credentials unless --reflect-header sets its own, an unknown service with a suggestion, and
// a header file line without a colon.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import * as net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { runBufCurl } from "../support/buf";
import { runCli } from "../support/cli";
import { type DemoServer, demoDescriptorSet, startDemoServer } from "../support/servers";

const dir = mkdtempSync(join(tmpdir(), "protocall-curl-requirements-"));
let demo: DemoServer;
let schema: string;
let probe: http.Server;
let probeUrl: string;
let silent: net.Server;
let silentPort: number;
const silentSockets = new Set<net.Socket>();

/**
 * The kernel's timer of the client's end of a connection, from /proc/net/tcp: `02:<when>` while TCP
 * keepalive is on (when = centiseconds to the next probe), `00:00000000` when it is off. Only the
 * established connection from `clientPort` to `serverPort` counts: an older connection that used the
 * same client port may still be listed, in TIME_WAIT (timer `03`).
 */
function clientTimer(clientPort: number, serverPort: number): string {
  const hex = (port: number) => `:${port.toString(16).toUpperCase().padStart(4, "0")}`;
  for (const line of readFileSync("/proc/net/tcp", "utf8").split("\n")) {
    const f = line.trim().split(/\s+/);
    const established = f[3] === "01";
    if (established && f[1]?.endsWith(hex(clientPort)) && f[2]?.endsWith(hex(serverPort))) return f[5];
  }
  return "none";
}

before(async () => {
  demo = await startDemoServer();
  schema = await demoDescriptorSet();
  // Answers every call with a Connect error whose message is the client socket's TCP timer.
  probe = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const timer = clientTimer(req.socket.remotePort ?? 0, req.socket.localPort ?? 0);
      res.writeHead(400, { "content-type": "application/json" });
      res.end(JSON.stringify({ code: "invalid_argument", message: `timer=${timer}` }));
    });
  });
  await new Promise<void>((ok) => probe.listen(0, "127.0.0.1", ok));
  probeUrl = `http://127.0.0.1:${(probe.address() as AddressInfo).port}/demo.v1.GreetService/Greet`;
  // Accepts connections, reads everything, never answers.
  silent = net.createServer((socket) => {
    silentSockets.add(socket);
    socket.on("error", () => {});
    socket.on("close", () => silentSockets.delete(socket));
    socket.resume();
  });
  await new Promise<void>((ok) => silent.listen(0, "127.0.0.1", ok));
  silentPort = (silent.address() as AddressInfo).port;
});

after(async () => {
  await demo?.close();
  probe?.closeAllConnections();
  await new Promise<void>((ok) => (probe ? probe.close(() => ok()) : ok()));
  for (const s of silentSockets) s.destroy();
  await new Promise<void>((ok) => (silent ? silent.close(() => ok()) : ok()));
  rmSync(dir, { recursive: true, force: true });
});

function curl(args: string[], stdin?: string) {
  return runCli(["curl", ...args], {
    cwd: dir,
    stdin,
    env: { HOME: dir, NETRC: undefined },
    // Only a guard against a hang: far above any run's time, even on a busy machine.
    timeoutMs: 120_000,
  });
}

/** The TCP timer the probe server saw on the client's socket. */
async function timerWith(flags: string[]): Promise<{ kind: string; seconds: number }> {
  const r = await curl([...flags, "--schema", schema, probeUrl]);
  assert.equal(r.code, 24, r.stderr);
  const m = r.stderr.match(/timer=([0-9A-F]{2}):([0-9A-F]{8})/);
  assert.ok(m, r.stderr);
  return { kind: m[1], seconds: Number.parseInt(m[2], 16) / 100 };
}

describe("protocall curl requirements", { concurrency: 4 }, () => {
  // The timer counts down from the interval while the call is under way, and a busy machine may take
  // seconds to get there: the checks tell the intervals apart without assuming how long that took.
  it("keeps TCP keepalive on by default with 60 s between probes", async () => {
    const t = await timerWith([]);
    assert.equal(t.kind, "02");
    assert.ok(t.seconds > 5 && t.seconds <= 60, String(t.seconds));
  });

  it("--keepalive-time sets the interval; --no-keepalive turns keepalive off", async () => {
    const t = await timerWith(["--keepalive-time", "5"]);
    assert.equal(t.kind, "02");
    assert.ok(t.seconds > 0 && t.seconds <= 5, String(t.seconds));
    const off = await timerWith(["--no-keepalive"]);
    assert.equal(off.kind, "00");
  });

  it("--connect-timeout bounds only the connection: a longer call still succeeds", async () => {
    const started = Date.now();
    const r = await curl([
      "--connect-timeout",
      "0.3",
      "--schema",
      schema,
      "-d",
      '{"count":3,"delayMs":250}',
      `${demo.url}/demo.v1.DemoService/Count`,
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal((r.stdout.match(/"number"/g) ?? []).length, 3);
    // Three messages 250 ms apart: the call outlived the 0.3 s connect timeout.
    assert.ok(Date.now() - started >= 500);
  });

  for (const protocol of ["connect", "grpc"]) {
    it(`a server that never answers ends at --timeout with deadline_exceeded (${protocol})`, async () => {
      // The call never ends unless the deadline ends it, so ending by itself with deadline_exceeded
      // is the proof; no upper bound on the time (the harness only guards against a hang). The
      // deadline leaves start-up and loading the schema room on a busy machine: buf's --timeout
      // bounds the whole command, and may count them.
      const url = `http://127.0.0.1:${silentPort}/demo.v1.GreetService/Greet`;
      const args = ["--protocol", protocol, "--timeout", "5s", "--schema", schema, url];
      const started = Date.now();
      const [r, theirs] = await Promise.all([
        curl(args).then((result) => ({ ...result, took: Date.now() - started })),
        runBufCurl(args, { cwd: dir, timeoutMs: 120_000 }),
      ]);
      assert.equal(r.timedOut, false, "protocall curl ended by itself");
      assert.equal(r.code, 32, r.stderr);
      assert.equal(r.stdout, "");
      // In buf's words.
      assert.equal(
        r.stderr,
        '{\n   "code": "deadline_exceeded",\n   "message": "context deadline exceeded"\n}\n',
      );
      assert.ok(r.took >= 5000, `ended after ${r.took} ms, before the deadline`);
      // buf ends at its deadline too: in the call (deadline_exceeded, 32), or, on a machine so busy
      // that loading the schema took the whole deadline, while loading it (exit 1).
      assert.equal(theirs.timedOut, false, "buf curl ended by itself");
      if (theirs.code === 1) assert.match(theirs.stderr, /context deadline exceeded/);
      else assert.equal(theirs.stderr, r.stderr);
    });
  }

  it("reflection requests carry the call's credentials unless --reflect-header sets its own", async () => {
    const inspect = JSON.stringify({
      headerNames: ["authorization"],
      reflectionHeaderNames: ["authorization"],
    });
    const url = `${demo.url}/demo.v1.DemoService/Inspect`;
    const seen = async (args: string[]) => {
      const r = await curl([...args, "-d", inspect, url]);
      assert.equal(r.code, 0, r.stderr);
      const out = JSON.parse(r.stdout) as {
        headers?: { value: string }[];
        reflectionHeaders?: { value: string }[];
      };
      return {
        call: (out.headers ?? []).map((h) => h.value),
        reflection: (out.reflectionHeaders ?? []).map((h) => h.value),
      };
    };
    const basic = `Basic ${Buffer.from("ada:pw").toString("base64")}`;
    assert.deepEqual(await seen(["-u", "ada:pw"]), { call: [basic], reflection: [basic] });
    const netrc = join(dir, "netrc");
    writeFileSync(netrc, `machine 127.0.0.1:${demo.port} login ada password pw\n`);
    assert.deepEqual(await seen(["--netrc-file", netrc]), { call: [basic], reflection: [basic] });
    assert.deepEqual(await seen(["-u", "ada:pw", "--reflect-header", "Authorization: Bearer r"]), {
      call: [basic],
      reflection: ["Bearer r"],
    });
    assert.deepEqual(await seen(["-H", "Authorization: Bearer c", "--reflect-header", "*"]), {
      call: ["Bearer c"],
      reflection: ["Bearer c"],
    });
  });

  it("an unknown service is one line that suggests the close name, exit 1", async () => {
    const r = await curl(["--schema", schema, `${demo.url}/demo.v1.GreetServce/Greet`]);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, "");
    assert.match(r.stderr, /^protocall: [^\n]*demo\.v1\.GreetService[^\n]*\n$/);
  });

  it("a header file line without a colon names the file and line (not its text, which may be a secret), exit 1", async () => {
    writeFileSync(join(dir, "headers.txt"), "# comment\nx-a: 1\n\nno colon here\n");
    const r = await curl([
      "-H",
      "@headers.txt",
      "--schema",
      schema,
      `${demo.url}/demo.v1.GreetService/Greet`,
    ]);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, "");
    assert.match(
      r.stderr,
      /^protocall: headers\.txt:4 is a malformed header \(it has no ":"\); write it as "name: value"\n$/,
    );
    assert.doesNotMatch(r.stderr, /no colon here/);
  });
});
