// How `--workers N` splits a run: shares that add up to the whole, rows dealt round-robin.
import assert from "node:assert/strict";
import { test } from "node:test";
import { type LoadShape, openSchedule } from "../../../src/core/load/shape";
import {
  splitEvenly,
  workerConnections,
  workerCount,
  workerRows,
  workerShape,
} from "../../../src/core/load/worker-split";

test("shares add up to the whole: the rate divided (each worker every third request of the whole schedule), callers, requests and connections split evenly", () => {
  const open: LoadShape = {
    model: "open",
    start: 0,
    stages: [{ durationMs: 1000, target: 90 }],
    warmupMs: 500,
    requests: 10,
  };
  const parts = [0, 1, 2].map((i) => workerShape(open, 3, i));
  assert.deepEqual(
    parts.map((p) => [p.stages[0].target, p.warmupMs, p.share]),
    [
      [30, 500, { index: 0, of: 3 }],
      [30, 500, { index: 1, of: 3 }],
      [30, 500, { index: 2, of: 3 }],
    ],
  );
  assert.deepEqual(
    parts.map((p) => openSchedule(p).total),
    [4, 3, 3],
  );
  const closed: LoadShape = {
    model: "closed",
    start: 5,
    stages: [{ durationMs: 1000, target: 5 }],
    warmupMs: 0,
  };
  assert.deepEqual(
    [0, 1].map((i) => workerShape(closed, 2, i).stages[0].target),
    [3, 2],
  );
  assert.equal(splitEvenly(7, 3, 0) + splitEvenly(7, 3, 1) + splitEvenly(7, 3, 2), 7);
  assert.deepEqual(
    [0, 1, 2].map((i) => workerConnections(2, 3, i)),
    [1, 1, 1],
  );
  assert.deepEqual(workerRows(["a", "b", "c", "d", "e"], 2, 1), ["b", "d"]);
  assert.equal(workerShape(open, 1, 0), open);
});

test("open model: the workers' schedules interleave into the whole run's, due times and count exactly", () => {
  const cases: LoadShape[] = [
    // 5 requests/s for 1 s over 2 workers: 3 + 2, not 2 + 2.
    { model: "open", start: 5, stages: [{ durationMs: 1000, target: 5 }], warmupMs: 0 },
    // A ramp, and a stop after 17 requests, over 3 workers.
    { model: "open", start: 0, stages: [{ durationMs: 2000, target: 40 }], warmupMs: 0, requests: 17 },
  ];
  for (const [shape, workers] of [
    [cases[0], 2],
    [cases[1], 3],
  ] as const) {
    const whole = openSchedule(shape);
    const dues: number[] = [];
    for (let i = 0; i < workers; i++) {
      const part = openSchedule(workerShape(shape, workers, i));
      for (let k = 0; k < part.total; k++) dues.push(part.due(k) as number);
      assert.equal(part.due(part.total), undefined);
    }
    const expected = Array.from({ length: whole.total }, (_, k) => whole.due(k) as number);
    assert.deepEqual(
      dues.sort((a, b) => a - b),
      expected,
    );
  }
  assert.equal(openSchedule(cases[0]).total, 5);
});

test("the worker count: a whole number, or auto (one per core, at most one per connection)", () => {
  assert.equal(workerCount(undefined, 4, 8), 1);
  assert.equal(workerCount("3", 1, 2), 3);
  assert.equal(workerCount("auto", 4, 2), 2);
  assert.equal(workerCount("auto", 1, 8), 1);
  assert.throws(() => workerCount("0", 1, 2), /invalid --workers "0": write a whole number above 0, or auto/);
});
