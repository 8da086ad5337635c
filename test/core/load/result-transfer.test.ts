// Merging worker threads' results (`--workers N`) gives what one recorder of every request would:
// histograms travel in the HdrHistogram encoding with their exact count/min/max/sum, counters and
// samples add up, and each second of the timeline is merged from its histograms.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { LoadResult } from "../../../src/core/load/generator";
import { Histogram } from "../../../src/core/load/histogram";
import { type Outcome, Recorder } from "../../../src/core/load/recorder";
import {
  histogramPart,
  mergeResults,
  resultPart,
  type TickPart,
} from "../../../src/core/load/result-transfer";
import type { LoadShape } from "../../../src/core/load/shape";

const shape: LoadShape = {
  model: "open",
  start: 10,
  stages: [{ durationMs: 2000, target: 10 }],
  warmupMs: 0,
};

function outcome(i: number): Outcome {
  const passed = i % 3 !== 0;
  return {
    status: i % 5 === 0 ? "unavailable" : "ok",
    passed,
    failedChecks: passed ? [] : ["status == ok"],
    error: i % 5 === 0 ? `refused ${i % 2}` : undefined,
    bytesSent: 10,
    bytesReceived: 20 + (i % 4),
    messages: 1,
  };
}

function run(indices: number[]): { result: LoadResult; ticks: TickPart[] } {
  const total = new Recorder();
  const stage = new Recorder();
  const perSecond = new Map<number, Histogram>();
  for (const i of indices) {
    const latency = 100 + ((i * 7919) % 50_000);
    const at = (i * 37) % 2000;
    total.record(outcome(i), latency, at);
    stage.record(outcome(i), latency, at);
    total.lag.record(i % 90);
    const second = Math.floor(at / 1000) + 1;
    if (!perSecond.has(second)) perSecond.set(second, new Histogram());
    perSecond.get(second)?.record(latency);
  }
  const ticks = [...perSecond].map(([second, h]) => ({
    tick: { second, requests: h.count, failed: 0, p50: 0, p99: 0, max: 0, target: 5 },
    latency: histogramPart(h),
  }));
  return {
    result: {
      shape,
      total,
      stages: [stage],
      timeline: [],
      elapsedMs: 2000,
      due: indices.length,
      maxInFlight: 3,
      interrupted: false,
    },
    ticks,
  };
}

test("two workers' parts merge into what one recorder of every request holds", () => {
  const all = Array.from({ length: 400 }, (_, i) => i);
  const whole = run(all).result.total;
  const a = run(all.filter((i) => i % 2 === 0));
  const b = run(all.filter((i) => i % 2 === 1));
  const { result, lightPath } = mergeResults(shape, [
    resultPart(a.result, a.ticks, { light: true }),
    resultPart(b.result, b.ticks, { light: false, why: "the grpc protocol" }),
  ]);
  const t = result.total;
  for (const key of ["requests", "passed", "bytesSent", "bytesReceived", "messages"] as const) {
    assert.equal(t[key], whole[key], key);
  }
  for (const h of ["latency", "lag"] as const) {
    assert.equal(t[h].count, whole[h].count);
    assert.equal(t[h].min, whole[h].min);
    assert.equal(t[h].max, whole[h].max);
    assert.equal(t[h].sum, whole[h].sum);
    for (const p of [50, 90, 99, 99.9])
      assert.equal(t[h].percentile(p), whole[h].percentile(p), `${h} p${p}`);
  }
  assert.deepEqual(Object.fromEntries(t.statuses), Object.fromEntries(whole.statuses));
  assert.deepEqual(Object.fromEntries(t.checks), Object.fromEntries(whole.checks));
  assert.deepEqual(
    Object.fromEntries([...t.errors].map(([k, e]) => [k, e.count])),
    Object.fromEntries([...whole.errors].map(([k, e]) => [k, e.count])),
  );
  assert.equal(t.firstAt, whole.firstAt);
  assert.equal(t.lastAt, whole.lastAt);
  assert.equal(result.stages[0].requests, 400);
  assert.equal(result.due, 400);
  assert.equal(result.maxInFlight, 6);
  // The timeline: each second's requests and targets add up, its percentiles are of all its requests.
  assert.deepEqual(
    result.timeline.map((s) => [s.second, s.target]),
    [
      [1, 10],
      [2, 10],
    ],
  );
  assert.equal(
    result.timeline.reduce((n, s) => n + s.requests, 0),
    400,
  );
  const first = new Histogram();
  for (const i of all) if ((i * 37) % 2000 < 1000) first.record(100 + ((i * 7919) % 50_000));
  assert.equal(result.timeline[0].p99, first.percentile(99) / 1000);
  // A worker that did not take the light path says why.
  assert.deepEqual(lightPath, { light: false, why: "the grpc protocol" });
});
