// The run's shape: the open model's due times (constant and ramped rates), stages, and thresholds.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { LoadReport } from "../../../src/core/load/report";
import { type LoadShape, openSchedule, parseStages, targetAt } from "../../../src/core/load/shape";
import { checkThresholds, parseThreshold } from "../../../src/core/load/thresholds";

const shape = (s: Partial<LoadShape>): LoadShape => ({
  model: "open",
  start: 0,
  stages: [],
  warmupMs: 0,
  ...s,
});

describe("load shape", () => {
  test("a constant rate: request k is due at (k+1)/rate, and the count is rate × duration", () => {
    const s = openSchedule(shape({ start: 200, stages: [{ durationMs: 2000, target: 200 }] }));
    assert.equal(s.total, 400);
    assert.equal(s.due(0), 5);
    assert.equal(s.due(199), 1000);
    assert.equal(s.due(399), 2000);
    assert.equal(s.due(400), undefined);
  });

  test("a ramp from 0 to 100/s over 10 s sends 500 requests, denser at its end; --requests caps them", () => {
    const ramp = shape({ stages: [{ durationMs: 10_000, target: 100 }] });
    const s = openSchedule(ramp);
    assert.equal(s.total, 500);
    // Half the requests are due by t where t²/2 × 10/s² = 250: t ≈ 7.07 s.
    assert.ok(Math.abs((s.due(249) ?? 0) - 7071) < 2);
    const times = Array.from({ length: 500 }, (_, k) => s.due(k) ?? Number.NaN);
    for (let k = 1; k < times.length; k++) assert.ok(times[k] >= times[k - 1]);
    assert.equal(targetAt(ramp, 5000), 50);
    assert.equal(openSchedule({ ...ramp, requests: 10 }).total, 10);
  });

  test("stages ramp from one target to the next", () => {
    const stages = parseStages("10s:100,1m:500,10s:0");
    assert.deepEqual(stages, [
      { durationMs: 10_000, target: 100 },
      { durationMs: 60_000, target: 500 },
      { durationMs: 10_000, target: 0 },
    ]);
    const s = shape({ stages });
    assert.equal(targetAt(s, 40_000), 300);
    assert.equal(openSchedule(s).total, 500 + 18_000 + 2500);
    assert.throws(
      () => parseStages("10s:100,fast"),
      /invalid --stages "10s:100,fast": "fast" is not DURATION:TARGET; write e\.g\./,
    );
    assert.throws(() => parseStages("10:100"), /is not DURATION:TARGET/);
  });

  test("thresholds parse with units and are checked against the report's totals", () => {
    assert.deepEqual(parseThreshold("p99<50ms"), { text: "p99<50ms", metric: "p99", op: "<", value: 50 });
    assert.equal(parseThreshold("p99.9 <= 1s").value, 1000);
    assert.equal(parseThreshold("errors<1%").value, 0.01);
    assert.equal(parseThreshold("rps>=900").value, 900);
    assert.throws(() => parseThreshold("p99<50"), /a latency needs a unit \(ms, s or us\), e\.g\. p99<50ms/);
    assert.throws(() => parseThreshold("latency<5ms"), /unknown metric "latency"/);
    const report = {
      total: { errorRate: 0.02, rps: 950, latency: { p99: 40, p999: 80, p50: 5 } },
    } as unknown as LoadReport;
    const results = checkThresholds(
      report,
      ["p99<50ms", "errors<1%", "rps>=900", "p99.9<50ms"].map(parseThreshold),
    );
    assert.deepEqual(
      results.map((r) => [r.text, r.passed, r.actual]),
      [
        ["p99<50ms", true, 40],
        ["errors<1%", false, 0.02],
        ["rps>=900", true, 950],
        ["p99.9<50ms", false, 80],
      ],
    );
  });
});
