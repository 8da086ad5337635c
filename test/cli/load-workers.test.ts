// `protocall load --workers N` end to end: the built CLI spreads the run over worker threads against a
// real Connect server on loopback that records what it is sent (test/support/load-server().ts), and
// merges their results into one report. Counts are checked exactly; times never tightly.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import type { LoadWorkerData } from "../../src/cli/commands/load";
import { runLoadWorkers } from "../../src/core/load/load-workers";
import type { LoadReport } from "../../src/core/load/report";
import type { LoadShape } from "../../src/core/load/shape";
import { workerShape } from "../../src/core/load/worker-split";
import { cliPath, runCli } from "../support/cli";
import { loadFixture } from "../support/load-server";

const { dir, server, greet, load: loadFor } = loadFixture("protocall-load-workers-");
const load = (args: string[]) => loadFor(args, 120_000);

describe("protocall load --workers", { timeout: 300_000 }, () => {
  test("two workers at a fixed rate send exactly rate × duration requests in total, in one merged report", async () => {
    const { code, stderr, report } = await load([
      greet(),
      "--rate",
      "100",
      "--duration",
      "2s",
      "--workers",
      "2",
      "--connections",
      "2",
    ]);
    assert.equal(code, 0, stderr);
    assert.equal(report.version, 1);
    assert.equal(report.workers, 2);
    assert.equal(report.model, "open");
    assert.equal(report.total.requests, 200);
    assert.equal(report.total.passed, 200);
    assert.deepEqual(report.total.statuses, { ok: 200 });
    assert.equal(server().names.length, 200);
    assert.equal(report.total.latency.count, 200);
    assert.ok(report.total.sendLag, "the send lag of both workers");
    assert.equal(report.total.sendLag?.count, 200);
    // The timeline merged second by second: its requests add up to the run's.
    assert.equal(
      report.timeline.reduce((s, t) => s + t.requests, 0),
      200,
    );
    const l = report.total.latency;
    assert.ok(l.min <= l.p50 && l.p50 <= l.p99 && l.p99 <= l.max);
    assert.match(stderr, /^load .*: 2 s at 100 requests\/s; over 2 connections; in 2 worker threads/);
    assert.match(stderr, /workers {4}2 threads generated the load/);
    assert.match(stderr, /requests {3}200 \(200 passed, 0 failed/);
  });

  test("the closed model splits the callers and --requests; assertion failures and thresholds are counted over all workers", async () => {
    writeFileSync(join(dir, "ab.csv"), "user\na\nb\nc\nd\n");
    const file = greet('{"name": "{{user}}"}', '# @assert message.greeting == "Hello, a!"\n');
    const { code, stderr, report } = await load([
      file,
      "--concurrency",
      "4",
      "--requests",
      "40",
      "--data",
      "ab.csv",
      "--workers",
      "2",
      "--threshold",
      "errors<50%",
      "--threshold",
      "p99<60s",
    ]);
    assert.equal(code, 1, stderr);
    assert.equal(report.workers, 2);
    assert.equal(report.model, "closed");
    assert.equal(report.total.requests, 40);
    assert.equal(report.total.passed, 10);
    assert.equal(report.total.failed, 30);
    assert.deepEqual(report.total.failedChecks, { 'message.greeting == "Hello, a!"': 30 });
    assert.ok(report.maxInFlight <= 4);
    assert.deepEqual(
      report.thresholds.map((t) => [t.text, t.passed, t.actual]),
      [
        ["errors<50%", false, 0.75],
        ["p99<60s", true, report.thresholds[1].actual],
      ],
    );
    assert.match(stderr, /threshold errors<50%: FAILED/);
  });

  test("--data rows are dealt round-robin to the workers: with as many requests as rows, each row is used once", async () => {
    const users = Array.from({ length: 12 }, (_, i) => `u${i}`);
    writeFileSync(join(dir, "users.csv"), `user\n${users.join("\n")}\n`);
    const { code, stderr, report } = await load([
      greet('{"name": "{{user}}"}'),
      "--rate",
      "40",
      "--requests",
      "12",
      "--data",
      "users.csv",
      "--workers",
      "3",
      "--connections",
      "3",
    ]);
    assert.equal(code, 0, stderr);
    assert.equal(report.workers, 3);
    assert.deepEqual([...server().names].sort(), [...users].sort());
    const few = await runCli(["load", greet(), "--rate", "5", "--data", "ab.csv", "--workers", "8"], {
      cwd: dir,
    });
    assert.equal(few.code, 1);
    assert.match(
      few.stderr,
      /--data has 4 rows and --workers 8 deals them out round-robin: give at least 8 rows/,
    );
  });

  test("# @load workers=N and --workers auto; a bad count is refused with what to write", async () => {
    const { code, stderr, report } = await load([
      greet(undefined, "# @load rate=20 requests=10 workers=2\n"),
    ]);
    assert.equal(code, 0, stderr);
    assert.equal(report.workers, 2);
    assert.equal(report.total.requests, 10);
    assert.equal(server().names.length, 10);
    // auto: one per core, at most one per connection; one connection means one worker (in-process).
    const auto = await load([greet(), "--rate", "20", "--requests", "5", "--workers", "auto"]);
    assert.equal(auto.code, 0, auto.stderr);
    assert.equal(auto.report.workers, 1);
    const bad = await runCli(["load", greet(), "--rate", "5", "--workers", "two"], { cwd: dir });
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /invalid --workers "two": write a whole number above 0, or auto/);
  });

  test("live progress merges the workers' snapshots: requests and latencies of both", async () => {
    const file = greet();
    const shape: LoadShape = {
      model: "open",
      start: 40,
      stages: [{ durationMs: 2500, target: 40 }],
      warmupMs: 0,
    };
    const seen: { requests: number; latencyCount: number; elapsedMs: number }[] = [];
    const { result } = await runLoadWorkers({
      script: cliPath,
      workers: 2,
      shape,
      env: process.env,
      progressMs: 200,
      onProgress: (p) =>
        seen.push({
          requests: p.recorder.requests,
          latencyCount: p.recorder.latency.count,
          elapsedMs: p.elapsedMs,
        }),
      workerData: (i): LoadWorkerData => ({
        protocallLoadWorker: true,
        args: [file],
        cwd: dir,
        index: i,
        workers: 2,
        shape: workerShape(shape, 2, i),
        connections: 1,
        maxInFlight: 1000,
        progress: true,
      }),
    });
    assert.equal(result.total.requests, 100);
    assert.ok(seen.length >= 1, "progress was shown");
    for (const p of seen) assert.equal(p.latencyCount, p.requests);
    // Snapshots of both workers: more than one worker's share (50) was seen before the end.
    assert.ok(
      seen.some((p) => p.requests > 50),
      JSON.stringify(seen.map((p) => p.requests)),
    );
  });

  test("a worker that fails stops the others, and its message is the run's error", async () => {
    const shape: LoadShape = {
      model: "open",
      start: 10,
      stages: [{ durationMs: 30_000, target: 10 }],
      warmupMs: 0,
    };
    const file = greet();
    await assert.rejects(
      runLoadWorkers({
        script: cliPath,
        workers: 2,
        shape,
        env: process.env,
        workerData: (i): LoadWorkerData => ({
          protocallLoadWorker: true,
          // The second worker's request file is not there: it fails at once, the first is stopped.
          args: [i === 0 ? file : join(dir, "gone.rpc")],
          cwd: dir,
          index: i,
          workers: 2,
          shape: workerShape(shape, 2, i),
          connections: 1,
          maxInFlight: 1000,
          progress: false,
        }),
      }),
      /cannot read .*gone\.rpc: no such file/,
    );
  });

  test("Ctrl-C with workers stops them all and still writes the merged report of what ran", async () => {
    const out = join(dir, "interrupted.json");
    const child = spawn(
      process.execPath,
      [
        cliPath,
        "load",
        greet(),
        "--rate",
        "40",
        "--duration",
        "60s",
        "--workers",
        "2",
        "--reporter",
        `json=${out}`,
      ],
      { cwd: dir, stdio: ["ignore", "ignore", "pipe"] },
    );
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    // Interrupted once requests are flowing (20 of the 40 per second).
    while (server().names.length < 20) await new Promise((r) => setTimeout(r, 50));
    child.kill("SIGINT");
    assert.equal(await exited, 130, stderr);
    const report: LoadReport = JSON.parse(readFileSync(out, "utf8"));
    assert.equal(report.interrupted, true);
    assert.equal(report.workers, 2);
    assert.ok(report.elapsedMs < 60_000);
    assert.ok(report.total.requests >= 20);
    assert.equal(report.total.requests, server().names.length);
    assert.match(stderr, /\(interrupted: the report covers what ran\)/);
  });
});
