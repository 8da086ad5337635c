import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { formatDuration, parseDuration } from "../../../src/core/invoke/duration";

describe("parseDuration", () => {
  it("parses Go durations into milliseconds", () => {
    assert.equal(parseDuration("5s"), 5000);
    assert.equal(parseDuration("1m30s"), 90_000);
    assert.equal(parseDuration("250ms"), 250);
    assert.equal(parseDuration("1.5h"), 5_400_000);
    assert.equal(parseDuration(".5s"), 500);
    assert.equal(parseDuration("1h2m3s4ms"), 3_723_004);
    assert.equal(parseDuration("1500us"), 1.5);
    assert.equal(parseDuration("2000000ns"), 2);
    assert.equal(parseDuration("0"), 0);
    assert.equal(parseDuration("+2s"), 2000);
    assert.equal(parseDuration("-2s"), -2000);
  });

  it("refuses numbers without a unit and other text, naming the flag", () => {
    assert.throws(
      () => parseDuration("5"),
      (e: Error) =>
        e.message ===
        'invalid value "5" for --timeout: it has no unit; write 5s for seconds or 5ms for milliseconds',
    );
    assert.throws(() => parseDuration("abc", "--x"), /invalid value "abc" for --x: it is not a duration/);
    assert.throws(() => parseDuration(""), /it is empty/);
    assert.throws(() => parseDuration("5d"), /it is not a duration/);
    assert.throws(() => parseDuration("5 s"), /it is not a duration/);
  });

  it("is the one grammar: what --timeout (Go's syntax) and --batch-interval (5s, 500ms, 2m) took before", () => {
    // --timeout took Go durations, as buf curl does.
    for (const [text, ms] of [
      ["5s", 5000],
      ["1m30s", 90_000],
      ["250ms", 250],
      ["1.5h", 5_400_000],
      ["0", 0],
    ] as const) {
      assert.equal(parseDuration(text, "--timeout"), ms, text);
    }
    // --batch-interval took 5s, 500ms, 2m and decimals of them: all Go durations too.
    for (const [text, ms] of [
      ["5s", 5000],
      ["500ms", 500],
      ["2m", 120_000],
      ["1.5s", 1500],
    ] as const) {
      assert.equal(parseDuration(text, "--batch-interval"), ms, text);
    }
    // It also took a plain number of milliseconds, which buf refuses for --timeout: one grammar
    // refuses it everywhere, and the message says how to write what was meant.
    assert.throws(
      () => parseDuration("500", "--batch-interval"),
      /^ProtocallError: invalid value "500" for --batch-interval: it has no unit; write 500s for seconds or 500ms for milliseconds$/,
    );
  });

  it("formats durations", () => {
    assert.equal(formatDuration(0), "0s");
    assert.equal(formatDuration(250), "250ms");
    // Below a millisecond as Go prints it (a --timeout of 1ns or 500us is named as given).
    assert.equal(formatDuration(1e-6), "1ns");
    assert.equal(formatDuration(0.5), "500µs");
    assert.equal(formatDuration(90_000), "1m30s");
    assert.equal(formatDuration(3_723_500), "1h2m3.5s");
  });
});
