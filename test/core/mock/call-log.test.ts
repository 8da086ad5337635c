// The call log keeps the last calls, oldest first, however many have been made.
import assert from "node:assert/strict";
import { test } from "node:test";
import { CallLog, type MockCall } from "../../../src/core/mock/call-log";

const call = (n: number): Omit<MockCall, "id"> => ({
  time: new Date(n).toISOString(),
  method: "demo.v1.GreetService/Greet",
  protocol: "grpc",
  source: "generated",
  status: "ok",
  durationMs: n,
  headers: {},
  requests: [{ name: `n${n}` }],
  responses: [],
});

test("the log keeps the last `limit` calls in the order they ended, and tells each one as it is added", () => {
  const told: number[] = [];
  const log = new CallLog(3, (c) => told.push(c.id));
  for (let n = 1; n <= 2; n++) log.add(call(n));
  assert.deepEqual(
    log.list().map((c) => c.id),
    [1, 2],
  );
  for (let n = 3; n <= 8; n++) log.add(call(n));
  assert.deepEqual(
    log.list().map((c) => [c.id, c.durationMs]),
    [
      [6, 6],
      [7, 7],
      [8, 8],
    ],
  );
  assert.deepEqual(told, [1, 2, 3, 4, 5, 6, 7, 8]);
  log.clear();
  assert.deepEqual(log.list(), []);
  log.add(call(9));
  assert.deepEqual(
    log.list().map((c) => c.id),
    [9],
  );
});
