#!/usr/bin/env node
// `protocall check` of a request file with N requests (default 1,000) against the ~83 MB
// google-proto-files descriptor set (`--schema set --no-build`): every request's service, method,
// body and `# @assert` paths resolved and checked, as the editor does. Beside it, in the same run,
// `buf build` reading the same set (`buf build set.binpb -o /dev/null`): what buf needs just to load
// the schema. Fresh processes, median of BENCH_RUNS; target: check ≤ 2 s. The load average is printed
// with the figures: the machine may be shared.
// Environment: BENCH_REQUESTS (default 1000), BENCH_RUNS (default 5).
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { bufBinary, ensureLargeSchemaSet } from "./lib/large-set.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const count = Math.max(1, Number(process.env.BENCH_REQUESTS ?? 1000));
const runs = Math.max(1, Number(process.env.BENCH_RUNS ?? 5));
const cli = join(root, "bin/protocall.js");

const timeBinary = existsSync("/usr/bin/time") ? "/usr/bin/time" : undefined;

/** Runs a command; wall time, and CPU time (user + system) from GNU time when installed. */
function run(command, args, cwd = root) {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const argv = timeBinary ? ["-f", "@cpu %U %S", command, ...args] : args;
    const child = spawn(timeBinary ?? command, argv, { cwd, stdio: ["ignore", "pipe", "pipe"] });
    const out = [];
    const err = [];
    child.stdout.on("data", (c) => out.push(c));
    child.stderr.on("data", (c) => err.push(c));
    child.on("error", reject);
    child.on("close", (code) => {
      let stderr = Buffer.concat(err).toString();
      const cpu = /@cpu ([\d.]+) ([\d.]+)\n?$/.exec(stderr);
      if (cpu) stderr = stderr.slice(0, cpu.index);
      resolve({
        code,
        stdout: Buffer.concat(out).toString(),
        stderr,
        ms: performance.now() - start,
        cpuMs: cpu ? (Number(cpu[1]) + Number(cpu[2])) * 1000 : undefined,
      });
    });
  });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const load = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(" ");

// Methods from across the set (different packages and files), each with a body and assertions.
const methods = [
  [
    "google.pubsub.v1.Publisher/Publish",
    '{"topic": "projects/p/topics/t", "messages": [{"data": "aGk="}]}',
    "message.messageIds.length == 1",
  ],
  [
    "google.pubsub.v1.Subscriber/Pull",
    '{"subscription": "projects/p/subscriptions/s", "maxMessages": 10}',
    "message.receivedMessages[0].message.data exists",
  ],
  [
    "google.cloud.speech.v1.Speech/Recognize",
    '{"config": {"languageCode": "en-US", "sampleRateHertz": 16000}, "audio": {"uri": "gs://b/a.raw"}}',
    "message.results[0].alternatives[0].transcript isType string",
  ],
  [
    "google.cloud.translation.v3.TranslationService/TranslateText",
    '{"contents": ["hello"], "targetLanguageCode": "fr", "parent": "projects/p"}',
    'message.translations[0].translatedText == "bonjour"',
  ],
  [
    "google.firestore.v1.Firestore/GetDocument",
    '{"name": "projects/p/databases/d/documents/c/x"}',
    'message.name contains "documents"',
  ],
  [
    "google.cloud.kms.v1.KeyManagementService/Encrypt",
    '{"name": "projects/p/locations/l/keyRings/r/cryptoKeys/k", "plaintext": "aGk="}',
    "message.ciphertext exists",
  ],
  ["google.spanner.v1.Spanner/ExecuteSql", '{"session": "s", "sql": "SELECT 1"}', "message.rows.length >= 1"],
  [
    "google.cloud.vision.v1.ImageAnnotator/BatchAnnotateImages",
    '{"requests": [{"image": {"source": {"imageUri": "gs://b/i.png"}}, "features": [{"type": "LABEL_DETECTION"}]}]}',
    "message.responses[0].labelAnnotations[0].score > 0.5",
  ],
];

const dir = mkdtempSync(join(tmpdir(), "protocall-bench-check-"));
try {
  const b = await run(process.execPath, [join(root, "esbuild.mjs")]);
  if (b.code !== 0) throw new Error(`build failed:\n${b.stderr}`);
  const set = await ensureLargeSchemaSet();
  const file = join(dir, "requests.rpc");
  const lines = ["@host = http://127.0.0.1:1", ""];
  for (let i = 0; i < count; i++) {
    const [path, body, assertion] = methods[i % methods.length];
    lines.push(
      `### Request ${i}`,
      "# @assert status == ok",
      `# @assert ${assertion}`,
      `{{host}}/${path}`,
      "",
      body,
      "",
    );
  }
  writeFileSync(file, lines.join("\n"));
  writeFileSync(
    join(dir, "bad.rpc"),
    `### Typo\nhttp://127.0.0.1:1/google.pubsub.v1.Publisher/Publish\n\n{"topik": "t"}\n`,
  );

  // The check must see the schema: a typo is reported (and the real file is clean).
  const bad = await run(process.execPath, [cli, "check", "bad.rpc", "--no-build", "--schema", set], dir);
  if (bad.code !== 1 || !bad.stdout.includes('did you mean "topic"')) {
    throw new Error(`protocall check missed the typo (exit ${bad.code}):\n${bad.stdout}${bad.stderr}`);
  }

  const loadBefore = load();
  const ours = [];
  const theirs = [];
  const oursCpu = [];
  const theirsCpu = [];
  for (let i = -1; i < runs; i++) {
    const r = await run(process.execPath, [cli, "check", "requests.rpc", "--no-build", "--schema", set], dir);
    if (r.code !== 0 || r.stdout !== "") {
      throw new Error(`protocall check failed (exit ${r.code}):\n${r.stdout.slice(0, 2000)}${r.stderr}`);
    }
    const p = await run(bufBinary(), ["build", set, "-o", "/dev/null"], dir);
    if (p.code !== 0) throw new Error(`buf build failed:\n${p.stderr}`);
    if (i >= 0) {
      ours.push(r.ms);
      theirs.push(p.ms);
      oursCpu.push(r.cpuMs);
      theirsCpu.push(p.cpuMs);
    }
  }
  const loadAfter = load();
  const oursMs = median(ours);
  console.log(
    `${count} requests (${methods.length} methods of the 83 MB google-proto-files set), same run\n`,
  );
  const secs = (x) => (x === undefined ? "n/a" : `${(x / 1000).toFixed(2)} s`);
  console.log("| tool | median wall time | median CPU (user + sys) | wall times |");
  console.log("|---|---:|---:|---|");
  console.log(
    `| protocall check --schema set | ${secs(oursMs)} | ${secs(median(oursCpu))} | ${ours.map((x) => (x / 1000).toFixed(2)).join(", ")} |`,
  );
  console.log(
    `| buf build set -o /dev/null | ${secs(median(theirs))} | ${secs(median(theirsCpu))} | ${theirs.map((x) => (x / 1000).toFixed(2)).join(", ")} |`,
  );
  console.log(`\nload average (1, 5, 15 min): before ${loadBefore}, after ${loadAfter}`);
  console.log(`target: check ≤ 2 s: ${oursMs <= 2000 ? "met" : "NOT met"}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
