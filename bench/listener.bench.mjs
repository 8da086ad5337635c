#!/usr/bin/env node
// Listener throughput: `protocall listen` (durable store, fsync before each acknowledgement, group
// commit) under 50 concurrent HTTP/2 senders, beside a bare Node HTTP/2 server that does no work (the
// floor). Each server runs in its own process; the senders run here. Reports events/s and loss
// (events acknowledged with 200 but missing from the store afterwards).
// Usage: node bench/listener.bench.mjs [--events N] [--senders N]   (builds dist/cli.js when missing)
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import http2 from "node:http2";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const cli = join(root, "dist/cli.js");
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const EVENTS = arg("--events", 20_000);
const SENDERS = arg("--senders", 50);
if (!existsSync(cli)) {
  const build = spawnSync(process.execPath, [join(root, "esbuild.mjs")], { cwd: root, stdio: "inherit" });
  if (build.status !== 0) process.exit(1);
}

// A binary EventRequest of realistic size (a push with repository, commit and one tag), made by the CLI.
async function sampleEvent() {
  const child = spawn(process.execPath, [cli, "convert", "--type", "EventRequest", "-d", "-"], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const now = new Date().toISOString();
  child.stdin.end(
    JSON.stringify({
      event: "WEBHOOK_EVENT_REPOSITORY_PUSH",
      payload: {
        repositoryPush: {
          eventTime: now,
          repository: {
            id: "3c7f3fb5a2b04ad79b58b6f5b2f0a1d4",
            name: "petapis",
            ownerName: "acme",
            visibility: "VISIBILITY_PUBLIC",
            createTime: now,
            updateTime: now,
          },
          repositoryCommit: {
            id: "b9a5cc0a27834df6808749e9d64d821f",
            name: "b9a5cc0a27834df6808749e9d64d821f",
            createTime: now,
            digest: `shake256:${"ab".repeat(64)}`,
            commitSequenceId: "42",
            author: "alice",
            tags: [
              {
                id: "1f0e",
                name: "v1.0.0",
                commitName: "b9a5cc0a27834df6808749e9d64d821f",
                author: "alice",
                createTime: now,
              },
            ],
          },
        },
      },
    }),
  );
  const chunks = [];
  for await (const c of child.stdout) chunks.push(c);
  return Buffer.concat(chunks);
}

/** Starts a server process whose first stdout line is its URL. */
async function startServer(args) {
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "ignore"] });
  const rl = createInterface({ input: child.stdout });
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("server did not start")), 15_000);
    rl.once("line", (line) => {
      clearTimeout(timer);
      resolve(line.trim());
    });
    child.once("exit", (code) => reject(new Error(`server exited with ${code}`)));
  });
  rl.on("line", () => {});
  return { child, url };
}

/** CPU time (user + system) a process has used so far, in ms; undefined where /proc is missing. */
function cpuMs(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime + stime, in 1/100 s ticks
  } catch {
    return undefined;
  }
}

async function stop(child) {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
  if (child.exitCode === null) child.kill("SIGKILL");
}

async function drive(url, body) {
  const target = new URL(url);
  const sessions = Array.from({ length: SENDERS }, () => http2.connect(target.origin));
  let next = 0;
  let acked = 0;
  let failed = 0;
  const send = (session) =>
    new Promise((resolve) => {
      const stream = session.request({
        ":method": "POST",
        ":path": target.pathname,
        "content-type": "application/proto",
        "connect-protocol-version": "1",
      });
      let status = 0;
      stream.on("response", (h) => (status = h[":status"]));
      stream.on("data", () => {});
      stream.on("close", () => resolve(status));
      stream.on("error", () => resolve(0));
      stream.end(body);
    });
  const started = performance.now();
  await Promise.all(
    sessions.map(async (session) => {
      while (next < EVENTS) {
        next++;
        const status = await send(session);
        if (status === 200) acked++;
        else failed++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  for (const s of sessions) s.close();
  return { seconds, acked, failed, rate: acked / seconds };
}

async function countStored(store) {
  const child = spawn(process.execPath, [cli, "listen", "list", "--store", store], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const rl = createInterface({ input: child.stdout });
  let accepted = 0;
  for await (const line of rl) if (line.includes('"status":"accepted"')) accepted++;
  return accepted;
}

const floorSource = `
const http2 = require("node:http2");
const server = http2.createServer((req, res) => {
  req.resume();
  req.on("end", () => { res.writeHead(200, { "content-type": "application/proto" }); res.end(); });
});
server.listen(0, "127.0.0.1", () => console.log("http://127.0.0.1:" + server.address().port + "/buf.alpha.webhook.v1alpha1.EventService/Event"));
process.on("SIGTERM", () => process.exit(0));
`;

const body = await sampleEvent();
const dir = mkdtempSync(join(tmpdir(), "protocall-bench-listener-"));
const results = [];
try {
  const floor = await startServer(["-e", floorSource]);
  try {
    const cpu0 = cpuMs(floor.child.pid);
    const r = await drive(floor.url, body);
    const cpu = cpuMs(floor.child.pid) - cpu0;
    results.push({ server: "bare HTTP/2 server (floor, no work)", ...r, cpu, stored: "-", loss: "-" });
  } finally {
    await stop(floor.child);
  }
  const store = join(dir, "events.store");
  const listener = await startServer([cli, "listen", "--store", store, "--quiet"]);
  let r;
  let cpu;
  try {
    const cpu0 = cpuMs(listener.child.pid);
    r = await drive(listener.url, body);
    cpu = cpuMs(listener.child.pid) - cpu0;
  } finally {
    await stop(listener.child);
  }
  const stored = await countStored(store);
  results.push({
    server: "protocall listen (durable store)",
    ...r,
    cpu,
    stored,
    loss: Math.max(0, r.acked - stored),
  });
} finally {
  rmSync(dir, { recursive: true, force: true });
}

console.log(
  `${EVENTS} events (${body.length}-byte binary EventRequest, Connect unary) from ${SENDERS} concurrent HTTP/2 senders, one connection each; ${cpus().length} CPUs, load average ${loadavg()[0].toFixed(1)} at the end.\n`,
);
console.log(
  "| server | events/s | seconds | server CPU ms/event | events per server CPU-second | acknowledged | failed | stored | lost |",
);
console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
for (const r of results) {
  const perEvent = Number.isFinite(r.cpu) ? r.cpu / r.acked : undefined;
  console.log(
    `| ${r.server} | ${r.rate.toFixed(0)} | ${r.seconds.toFixed(2)} | ${perEvent?.toFixed(3) ?? "-"} | ${perEvent ? (1000 / perEvent).toFixed(0) : "-"} | ${r.acked} | ${r.failed} | ${r.stored} | ${r.loss} |`,
  );
}
console.log(
  "\nevents/s is wall-clock throughput (senders and server share the machine); CPU ms/event is the server process's own CPU time, which other load on the machine affects much less.",
);
const listenerRow = results[results.length - 1];
console.log(
  `\nTarget: the listener stores >= 5,000 events/s from 50 concurrent senders with zero loss: ${listenerRow.rate >= 5000 && listenerRow.loss === 0 ? "met" : "NOT met"} (${listenerRow.rate.toFixed(0)} events/s, ${listenerRow.loss} lost, ${SENDERS} senders).`,
);
if (listenerRow.loss !== 0 || listenerRow.failed !== 0) {
  console.error("listener bench: acknowledged events are missing from the store, or deliveries failed");
  process.exit(1);
}
