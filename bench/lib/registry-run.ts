// Bundled and run by bench/registry.bench.mjs: the registry emulator (`protocall registry serve
// --state`, its own process) measured empty and holding 1,000 pushes of a small module and 50
// webhooks. For each state: the latency of a push through the module API (UploadService/Upload over
// HTTP/1.1, binary, as buf sends it) and the delivery latency (from the push's answer to the event's
// arrival at an https callback), plus the time to fill the state and to restart on it.
import { spawn } from "node:child_process";
import { mkdtempSync, statSync, writeFileSync } from "node:fs";
import https from "node:https";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fromBinary } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import selfsigned from "selfsigned";
import { WebhookEvent, WebhookService } from "../../src/gen/buf/alpha/registry/v1alpha1/webhook_pb";
import { EventRequestSchema } from "../../src/gen/buf/alpha/webhook/v1alpha1/event_pb";
import { UploadService } from "../../src/gen/buf/registry/module/v1/upload_service_pb";

const [cli, samplesArg, fillArg] = process.argv.slice(2);
const SAMPLES = Number(samplesArg ?? 50);
const FILL = Number(fillArg ?? 1000);
const WEBHOOKS = 50;
const eventPath = "/buf.alpha.webhook.v1alpha1.EventService/Event";
const headers = { authorization: "Bearer alice-token" };

interface Server {
  url: string;
  stop(): Promise<void>;
}

function startRegistry(args: string[]): Promise<Server & { startMs: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, [cli, "registry", "serve", ...args], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const rl = createInterface({ input: child.stdout! });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("the registry did not start")), 60_000);
    rl.once("line", (url) => {
      clearTimeout(timer);
      resolve({
        url: url.trim(),
        startMs: performance.now() - started,
        stop: () =>
          new Promise<void>((done) => {
            child.once("exit", () => done());
            child.kill("SIGTERM");
          }),
      });
    });
    child.once("exit", (code) => reject(new Error(`the registry exited with ${code}`)));
  });
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

async function main() {
  const dir = mkdtempSync(join(tmpdir(), "protocall-registry-bench-"));
  const pems = await selfsigned.generate([{ name: "commonName", value: "localhost" }], {
    keyType: "ec",
    curve: "P-256",
    algorithm: "sha256",
    extensions: [{ name: "subjectAltName", altNames: [{ type: 7, ip: "127.0.0.1" }] }],
  });
  const caPath = join(dir, "callback.pem");
  writeFileSync(caPath, pems.cert);
  // The callback: records when each commit's event arrives.
  const arrived = new Map<string, number>();
  const waiters = new Map<string, () => void>();
  const callback = https.createServer({ cert: pems.cert, key: pems.private }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const at = performance.now();
      const event = fromBinary(EventRequestSchema, Buffer.concat(chunks));
      const p = event.payload?.payload;
      const id = p?.case === "repositoryPush" ? (p.value.repositoryCommit?.id ?? "") : "";
      arrived.set(id, at);
      waiters.get(id)?.();
      res.writeHead(200, { "content-type": "application/proto" });
      res.end();
    });
  });
  await new Promise<void>((r) => callback.listen(0, "127.0.0.1", r));
  const callbackUrl = `https://127.0.0.1:${(callback.address() as { port: number }).port}${eventPath}`;

  const config = join(dir, "config.json");
  writeFileSync(
    config,
    JSON.stringify({
      users: [{ name: "alice", token: "alice-token" }],
      repositories: Array.from({ length: WEBHOOKS }, (_, i) => ({
        owner: "acme",
        name: `m${i}`,
        admins: ["alice"],
      })),
    }),
  );
  const statePath = join(dir, "registry.state");
  const args = ["--config", config, "--state", statePath, "--trust-ca", caPath, "--batch-interval", "10ms"];

  let n = 0;
  const uploadOf = (module: string) => ({
    contents: [
      {
        moduleRef: { value: { case: "name" as const, value: { owner: "acme", module } } },
        files: [
          {
            path: "bench/v1/bench.proto",
            content: Buffer.from(
              `syntax = "proto3";\n\npackage bench.v1;\n\n// Push ${n++}.\nmessage Item {\n  string id = 1;\n  int64 count = 2;\n}\n`,
            ),
          },
          { path: "LICENSE", content: Buffer.from("Apache-2.0\n") },
        ],
      },
    ],
  });

  async function measure(url: string) {
    const transport = createConnectTransport({ baseUrl: url, httpVersion: "1.1" });
    const upload = createClient(UploadService, transport);
    const push: number[] = [];
    const delivery: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      const t0 = performance.now();
      const res = await upload.upload(uploadOf("m0"), { headers });
      const t1 = performance.now();
      push.push(t1 - t0);
      const id = res.commits[0].id;
      if (!arrived.has(id)) await new Promise<void>((r) => waiters.set(id, r));
      waiters.delete(id);
      delivery.push(arrived.get(id)! - t1);
    }
    return { push, delivery };
  }

  // Empty: one webhook (on the module pushed to), no commits.
  const empty = await startRegistry(args);
  const webhooksOf = (url: string) =>
    createClient(WebhookService, createConnectTransport({ baseUrl: url, httpVersion: "1.1" }));
  await webhooksOf(empty.url).createWebhook(
    { webhookEvent: WebhookEvent.REPOSITORY_PUSH, ownerName: "acme", repositoryName: "m0", callbackUrl },
    { headers },
  );
  const atZero = await measure(empty.url);

  // Fill: 1,000 pushes of the small module (8 at a time) and 49 more webhooks.
  const transport = createConnectTransport({ baseUrl: empty.url, httpVersion: "1.1" });
  const upload = createClient(UploadService, transport);
  const fillStart = performance.now();
  let left = FILL - SAMPLES;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (left-- > 0) await upload.upload(uploadOf("m0"), { headers });
    }),
  );
  const fillMs = performance.now() - fillStart;
  for (let i = 1; i < WEBHOOKS; i++) {
    await webhooksOf(empty.url).createWebhook(
      { webhookEvent: WebhookEvent.REPOSITORY_PUSH, ownerName: "acme", repositoryName: `m${i}`, callbackUrl },
      { headers },
    );
  }
  await empty.stop();
  const stateBytes = statSync(statePath).size;

  // Loaded: restarted on the state with 1,000 commits and 50 webhooks.
  const loaded = await startRegistry(args);
  const atFull = await measure(loaded.url);
  await loaded.stop();
  callback.close();

  const row = (what: string, xs: number[]) =>
    `| ${what} | ${quantile(xs, 0.5).toFixed(1)} | ${quantile(xs, 0.95).toFixed(1)} |`;
  console.log(
    `load average ${loadavg()[0].toFixed(1)}; ${SAMPLES} pushes measured in each state; batch interval 10 ms\n`,
  );
  console.log("| measurement | median ms | p95 ms |");
  console.log("|---|---|---|");
  console.log(row("push (Upload), empty registry", atZero.push));
  console.log(row(`push (Upload), ${FILL} commits + ${WEBHOOKS} webhooks`, atFull.push));
  console.log(row("delivery after the push's answer, empty registry", atZero.delivery));
  console.log(
    row(`delivery after the push's answer, ${FILL} commits + ${WEBHOOKS} webhooks`, atFull.delivery),
  );
  console.log(
    `\nfilled ${FILL - SAMPLES} pushes in ${(fillMs / 1000).toFixed(1)} s (${(((FILL - SAMPLES) * 1000) / fillMs).toFixed(0)} pushes/s, 8 concurrent, each durable before its answer); state file ${(stateBytes / 1024).toFixed(0)} KiB; restart on it: first line after ${loaded.startMs.toFixed(0)} ms (empty: ${empty.startMs.toFixed(0)} ms)`,
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
