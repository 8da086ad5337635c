// `protocall load` end to end: the built CLI against a real Connect/gRPC/gRPC-Web server on loopback
// that records what it is sent (test/support/load-server().ts). Rates and latencies are checked with
// generous bounds: the machine running the tests may be busy.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import type { LoadReport } from "../../src/core/load/report";
import { runCli } from "../support/cli";
import { loadFixture, startLoadServer } from "../support/load-server";

const { dir, server, rpc, greet, load } = loadFixture("protocall-load-");

describe("protocall load", { timeout: 300_000 }, () => {
  test("a fixed rate sends exactly rate × duration requests, spread over the duration, and reports them", async () => {
    const { code, stderr, report } = await load([greet(), "--rate", "100", "--duration", "3s"]);
    assert.equal(code, 0, stderr);
    assert.equal(report.version, 1);
    assert.equal(report.model, "open");
    assert.equal(report.total.requests, 300);
    assert.equal(report.total.passed, 300);
    assert.deepEqual(report.total.statuses, { ok: 300 });
    assert.equal(server().names.length, 300);
    // Bytes: each request's JSON body, each response message as JSON text.
    assert.ok(report.total.bytes.sent >= 300 * '{"name":"x"}'.length && report.total.bytes.sent % 300 === 0);
    assert.ok(
      report.total.bytes.received >= 300 * '"Hello, x!"'.length && report.total.bytes.received % 300 === 0,
    );
    // Spread over the 3 s (not sent in a burst), measured generously.
    assert.ok(report.elapsedMs >= 2900, `elapsed ${report.elapsedMs}`);
    assert.ok(report.total.rps > 40 && report.total.rps <= 105, `rps ${report.total.rps}`);
    // One record per second: at least the three of the run (on a loaded machine the answers of the
    // last requests may arrive seconds later, in further records).
    assert.ok(report.timeline.length >= 3, `${report.timeline.length} seconds`);
    assert.equal(
      report.timeline.reduce((s, t) => s + t.requests, 0),
      300,
    );
    const l = report.total.latency;
    assert.ok(l.min <= l.p50 && l.p50 <= l.p90 && l.p90 <= l.p99 && l.p99 <= l.p999 && l.p999 <= l.max);
    // HdrHistogram's compressed V2 encoding: base64 of its cookie 0x1c849314 reads "HIST".
    assert.match(l.hdr, /^HIST/);
    assert.match(stderr, /^load .*load\d+\.rpc: Greet: 3 s at 100 requests\/s/);
    assert.match(stderr, /requests {3}300 \(300 passed, 0 failed, 0\.00% errors\)/);
    assert.match(stderr, /latency {4}min [\d.]+ m?s {2}p50 .* p99\.9 .* max /);
  });

  test("coordinated omission: a server that stalls 1 s once in a 10 s run at 200/s shows in the p99 (measured from when requests were due)", async () => {
    server().stallOnce(1000, 600);
    const { code, stderr, report } = await load([greet(), "--rate", "200", "--duration", "10s"]);
    assert.equal(code, 0, stderr);
    assert.equal(report.total.requests, 2000);
    // About 200 requests were due during the stall, waiting up to 1 s: over 1% of the 2,000.
    assert.ok(report.total.latency.p99 >= 500, `p99 ${report.total.latency.p99} ms`);
    assert.ok(report.total.latency.max >= 900, `max ${report.total.latency.max} ms`);
    // Hundreds of requests in flight share one cancel signal without a listener-leak warning.
    assert.ok(report.maxInFlight > 10);
    assert.doesNotMatch(stderr, /Warning/);
  });

  test("stages ramp the rate: up to 100/s over 2 s and down to 0 over 2 s send 100 requests each, reported per stage", async () => {
    const { code, stderr, report } = await load([greet(), "--stages", "2s:100,2s:0"]);
    assert.equal(code, 0, stderr);
    assert.deepEqual(
      report.perStage.map((s) => s.requests),
      [100, 100],
    );
    assert.equal(report.total.requests, 200);
    assert.match(stderr, /stage 1 \(2\.0 s to 100\):\n {4}requests {3}100/);
  });

  test("the closed model: C callers, --requests stops after exactly that many, over --connections K connections", async () => {
    const before = server().connections();
    const { code, stderr, report } = await load([
      greet(),
      "--concurrency",
      "4",
      "--requests",
      "50",
      "--connections",
      "2",
    ]);
    assert.equal(code, 0, stderr);
    assert.equal(report.model, "closed");
    assert.equal(report.total.requests, 50);
    assert.equal(server().names.length, 50);
    assert.ok(report.maxInFlight <= 4);
    assert.equal(report.total.sendLag, undefined);
    // The first call resolves the method over a connection of its own; the light path's 2
    // connections carry the others.
    assert.equal(server().connections() - before, 3);
    assert.deepEqual(report.requestPath, { light: true });
    assert.match(stderr, /sent by {4}the light path \(unary Connect over h2c/);
    assert.match(stderr, /^load .*: at 4 callers; 50 requests at most; over 2 connections/);
  });

  test("--warmup runs first at the starting rate and counts nothing", async () => {
    const { code, stderr, report } = await load([
      greet(),
      "--rate",
      "20",
      "--duration",
      "1s",
      "--warmup",
      "1s",
    ]);
    assert.equal(code, 0, stderr);
    assert.equal(report.total.requests, 20);
    assert.equal(report.warmupMs, 1000);
    assert.equal(server().names.length, 40);
    assert.match(stderr, /: warmup 1 s at 20 requests\/s; 1 s at 20 requests\/s/);
  });

  test("stages ramp the callers of the closed model", async () => {
    const { code, stderr, report } = await load([greet(), "--concurrency", "1", "--stages", "1s:1,2s:6"]);
    assert.equal(code, 0, stderr);
    assert.equal(report.model, "closed");
    assert.equal(report.perStage.length, 2);
    assert.ok(report.perStage[0].requests > 0 && report.perStage[1].requests > 0);
    assert.ok(report.maxInFlight >= 3 && report.maxInFlight <= 6, `at most ${report.maxInFlight} in flight`);
  });

  test("thresholds set the exit code and the report says which failed", async () => {
    const ok = await load([
      greet(),
      "--rate",
      "50",
      "--requests",
      "20",
      "--threshold",
      "errors<1%",
      "--threshold",
      "p99<60s",
    ]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.deepEqual(
      ok.report.thresholds.map((t) => [t.text, t.passed]),
      [
        ["errors<1%", true],
        ["p99<60s", true],
      ],
    );
    const bad = await load([
      greet(),
      "--rate",
      "50",
      "--requests",
      "20",
      "--threshold",
      "p50<1us",
      "--threshold",
      "rps>=100000",
    ]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /threshold p50<1us: FAILED \(actual [\d.]+\)/);
    assert.match(bad.stderr, /threshold rps>=100000: FAILED/);
    const usage = await runCli(["load", greet(), "--rate", "5", "--threshold", "p99<5"], { cwd: dir });
    assert.equal(usage.code, 1);
    assert.match(usage.stderr, /invalid --threshold "p99<5": a latency needs a unit/);
  });

  test("a request's # @load line shapes the run and sets its thresholds; flags on the command line win", async () => {
    const file = greet('{"name": "x"}', "# @load rate=40 requests=20 threshold=p50<1us\n");
    const fromFile = await load([file]);
    assert.equal(fromFile.code, 1, fromFile.stderr);
    assert.equal(fromFile.report.model, "open");
    assert.equal(fromFile.report.total.requests, 20);
    assert.deepEqual(
      fromFile.report.thresholds.map((t) => [t.text, t.passed]),
      [["p50<1us", false]],
    );
    const overridden = await load([
      file,
      "--concurrency",
      "2",
      "--requests",
      "6",
      "--threshold",
      "errors<1%",
    ]);
    assert.equal(overridden.code, 0, overridden.stderr);
    assert.equal(overridden.report.model, "closed");
    assert.equal(overridden.report.total.requests, 6);
    assert.deepEqual(
      overridden.report.thresholds.map((t) => t.text),
      ["errors<1%"],
    );
    const bad = await runCli(["load", greet('{"name": "x"}', "# @load rate=often\n")], { cwd: dir });
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /load\d+\.rpc:3:\d+: invalid @load rate=often: write a number above 0/);
  });

  test("variables and generators are evaluated per request: every request carries its own {{$uuid}}", async () => {
    const { code, stderr } = await load([greet('{"name": "{{$uuid}}"}'), "--rate", "50", "--requests", "20"]);
    assert.equal(code, 0, stderr);
    assert.equal(server().names.length, 20);
    assert.equal(new Set(server().names).size, 20);
    for (const name of server().names) assert.match(name, /^[0-9a-f-]{36}$/);
  });

  test("--data rows reach the server, one row per request in turn (CSV and JSON Lines)", async () => {
    writeFileSync(join(dir, "users.csv"), 'user,other\nann,1\n"bo, b",2\ncy,3\n');
    const csv = await load([
      greet('{"name": "{{user}}"}'),
      "--rate",
      "50",
      "--requests",
      "6",
      "--data",
      "users.csv",
    ]);
    assert.equal(csv.code, 0, csv.stderr);
    assert.deepEqual([...server().names].sort(), ["ann", "ann", "bo, b", "bo, b", "cy", "cy"]);
    server().names.length = 0;
    writeFileSync(join(dir, "users.jsonl"), '{"user": "dee"}\n{"user": 7}\n');
    const jsonl = await load([
      greet('{"name": "{{user}}"}'),
      "--rate",
      "50",
      "--requests",
      "4",
      "--data",
      "users.jsonl",
    ]);
    assert.equal(jsonl.code, 0, jsonl.stderr);
    assert.deepEqual([...server().names].sort(), ["7", "7", "dee", "dee"]);
    const missing = await runCli(["load", greet(), "--rate", "5", "--data", "nope.csv"], { cwd: dir });
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /--data nope\.csv: cannot read it: no such file/);
  });

  test("assertions are checked on every response and failures counted by assertion", async () => {
    writeFileSync(join(dir, "ab.csv"), "user\na\nb\n");
    const file = greet('{"name": "{{user}}"}', '# @assert message.greeting == "Hello, a!"\n');
    const { code, stderr, report } = await load([
      file,
      "--rate",
      "50",
      "--requests",
      "10",
      "--data",
      "ab.csv",
    ]);
    assert.equal(code, 0, stderr);
    assert.equal(report.total.passed, 5);
    assert.equal(report.total.failed, 5);
    assert.deepEqual(report.total.failedChecks, { 'message.greeting == "Hello, a!"': 5 });
    assert.deepEqual(report.total.statuses, { ok: 10 });
    assert.match(stderr, /failed {5}message\.greeting == "Hello, a!": 5 times/);
  });

  for (const protocol of ["connect", "grpc", "grpcweb"]) {
    test(`streams over ${protocol}: a server stream's messages, time to first message, messages per second`, async () => {
      const file = rpc(
        `### Count\n# @http2-prior-knowledge\n# @protocol ${protocol}\nHOST/demo.v1.DemoService/Count\n\n{"count": 3, "delayMs": 20}\n`,
      );
      const { code, stderr, report } = await load([file, "--concurrency", "5", "--requests", "20"]);
      assert.equal(code, 0, stderr);
      assert.equal(report.total.passed, 20);
      assert.equal(report.total.messages.received, 60);
      assert.ok(report.total.firstMessage, "time to first message");
      assert.ok((report.total.firstMessage?.p50 ?? 0) <= report.total.latency.p50);
      assert.ok(report.total.latency.min >= 40, "two 20 ms pauses per stream");
      assert.match(stderr, /first msg {2}min/);
      assert.match(stderr, /messages {3}60 received/);
      // Streams go through the call pipeline, and the report says why.
      const why = protocol === "connect" ? "a server streaming method" : `the ${protocol} protocol`;
      assert.deepEqual(report.requestPath, { light: false, why });
      assert.ok(stderr.includes(`sent by    the call pipeline (not the light path: ${why})`), stderr);
    });
  }

  test("client and bidi streams send every message of the body", async () => {
    const sum = rpc(
      `### Sum\n# @http2-prior-knowledge\n# @assert message.sum == "6"\nHOST/demo.v1.DemoService/Sum\n\n{"number": 1}\n{"number": 2}\n{"number": 3}\n`,
    );
    const s = await load([sum, "--rate", "40", "--requests", "10"]);
    assert.equal(s.code, 0, s.stderr);
    assert.equal(s.report.total.passed, 10, JSON.stringify(s.report.total.failedChecks));
    const chat = rpc(
      `### Chat\n# @http2-prior-knowledge\n# @protocol grpc\nHOST/demo.v1.DemoService/Chat\n\n{"text": "a"}\n{"text": "b"}\n`,
    );
    const c = await load([chat, "--concurrency", "3", "--requests", "9"]);
    assert.equal(c.code, 0, c.stderr);
    assert.equal(c.report.total.messages.received, 18);
  });

  test("Ctrl-C stops sending and writes the report of what ran", async () => {
    const out = join(dir, "interrupted.json");
    const html = join(dir, "interrupted.html");
    const r = await runCli(
      [
        "load",
        greet(),
        "--rate",
        "50",
        "--duration",
        "60s",
        "--reporter",
        `json=${out}`,
        "--reporter",
        `html=${html}`,
      ],
      { cwd: dir, interruptWhen: /Ctrl-C stops and reports/, timeoutMs: 30_000 },
    );
    assert.equal(r.timedOut, false);
    assert.equal(r.code, 130, r.stderr);
    const report: LoadReport = JSON.parse(readFileSync(out, "utf8"));
    assert.equal(report.interrupted, true);
    assert.ok(report.elapsedMs < 30_000);
    assert.equal(report.total.requests, server().names.length);
    assert.match(r.stderr, /\(interrupted: the report covers what ran\)/);
    const page = readFileSync(html, "utf8");
    assert.match(page, /^<!doctype html>/);
    assert.match(page, /<svg [^>]*aria-label="Requests per second"/);
    assert.doesNotMatch(page, /<script|https?:\/\/(?!www\.w3\.org)/);
  });

  test("an unreachable server: every request fails with a sample of the error, and the run still ends and reports", async () => {
    const file = rpc("### Greet\nhttp://127.0.0.1:1/demo.v1.GreetService/Greet\n\n{}\n");
    const { code, stderr, report } = await load([
      file,
      "--rate",
      "20",
      "--requests",
      "10",
      "--threshold",
      "errors<1%",
    ]);
    assert.equal(code, 1);
    assert.equal(report.total.failed, 10);
    assert.equal(report.total.errors.length >= 1, true);
    assert.match(stderr, /error {6}error: .*(refused|connect)/i);
  });

  test("a server that goes away during a light path run: its requests are counted as unavailable, and the run ends", async () => {
    const gone = await startLoadServer();
    let closed = false;
    try {
      const file = rpc(`# @http2-prior-knowledge\n${gone.url}/demo.v1.GreetService/Greet\n\n{"name": "g"}\n`);
      const run = load([
        file,
        "--concurrency",
        "8",
        "--duration",
        "4s",
        "--warmup",
        "1s",
        "--threshold",
        "errors<1%",
      ]);
      // Past the warmup (which counts nothing), with answered requests in the measured part.
      while (gone.greets() < 100) await new Promise((r) => setTimeout(r, 20));
      await new Promise((r) => setTimeout(r, 2000));
      await gone.close();
      closed = true;
      const { code, stderr, report } = await run;
      assert.equal(code, 1, stderr);
      assert.deepEqual(report.requestPath, { light: true });
      assert.ok((report.total.statuses.ok ?? 0) > 0, stderr);
      assert.ok((report.total.statuses.unavailable ?? 0) > 0, stderr);
      assert.equal(report.total.failed, report.total.statuses.unavailable, stderr);
      assert.match(stderr, /unavailable: /);
    } finally {
      if (!closed) await gone.close();
    }
  });

  test("bad shapes are refused with what to write", async () => {
    const both = await runCli(["load", greet(), "--rate", "5", "--concurrency", "2"], { cwd: dir });
    assert.equal(both.code, 1);
    assert.match(both.stderr, /give --rate \(open model\) or --concurrency \(closed model\), not both/);
    const none = await runCli(["load", greet()], { cwd: dir });
    assert.match(none.stderr, /say how to load: --rate R/);
    const two = rpc(
      "### A\nHOST/demo.v1.GreetService/Greet\n\n{}\n### B\nHOST/demo.v1.GreetService/Greet\n\n{}\n",
    );
    const which = await runCli(["load", two, "--rate", "5"], { cwd: dir });
    assert.match(which.stderr, /holds 2 requests: choose one with --name \("A", "B"\)/);
    const help = await runCli(["load", "--help"], { cwd: dir });
    assert.equal(help.code, 0);
    assert.match(help.stdout, /Usage:\n {2}protocall load FILE\.rpc/);
  });
});
