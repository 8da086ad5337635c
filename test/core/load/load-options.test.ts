// The `# @load` line (src/core/load/load-options.ts): its words, its problems (where they are, and
// what to write), and how a .rpc file's parser reports them on the line.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { loadOptionValues, parseLoadLine } from "../../../src/core/load/load-options";
import { parseRpcFile } from "../../../src/core/rpcfile/parse";

describe("# @load", () => {
  test("reads NAME=VALUE words of the load flags", () => {
    const { words, problems } = parseLoadLine("rate=100 duration=10s threshold=p99<50ms threshold=errors<1%");
    assert.deepEqual(problems, []);
    assert.deepEqual(
      words.map((w) => [w.name, w.value, w.start, w.end]),
      [
        ["rate", "100", 0, 8],
        ["duration", "10s", 9, 21],
        ["threshold", "p99<50ms", 22, 40],
        ["threshold", "errors<1%", 41, 60],
      ],
    );
  });

  test("says what is wrong with a word, and where", () => {
    const { problems } = parseLoadLine("rate=fast speed=3 warmup= duration=10 stages=1s threshold=p99<5");
    assert.deepEqual(
      problems.map((p) => [p.start, p.end]),
      [
        [0, 9],
        [10, 17],
        [18, 25],
        [26, 37],
        [38, 47],
        [48, 63],
      ],
    );
    assert.match(problems[0].message, /invalid @load rate=fast: write a number above 0/);
    assert.match(
      problems[1].message,
      /unknown @load option "speed": write NAME=VALUE with NAME one of rate, concurrency/,
    );
    assert.match(problems[2].message, /@load warmup needs a value/);
    assert.match(problems[3].message, /invalid @load duration=10: write a duration such as 30s/);
    assert.match(problems[4].message, /@load stages: invalid --stages "1s"/);
    assert.match(problems[5].message, /@load threshold: .*a latency needs a unit/);
    assert.match(parseLoadLine("").problems[0].message, /@load needs options/);
  });

  test("several lines add up: the last of a name wins, thresholds add", () => {
    const v = loadOptionValues(["rate=10 threshold=p99<1s", "rate=20 duration=5s threshold=errors<1%"]);
    assert.deepEqual(Object.fromEntries(v), {
      rate: ["20"],
      threshold: ["p99<1s", "errors<1%"],
      duration: ["5s"],
    });
    assert.throws(() => loadOptionValues(["rate=0"]), /invalid @load rate=0/);
  });

  test("a .rpc file keeps its request's @load lines with where each value starts", () => {
    const text = "### Greet\n# @load rate=100 duration=10s\n# @load speed=3\nhttp://localhost/a.B/C\n";
    const f = parseRpcFile(text);
    assert.deepEqual(
      f.requests[0].load?.map((l) => [l.text, l.valueRange?.start]),
      [
        ["rate=100 duration=10s", { line: 1, character: 8 }],
        ["speed=3", { line: 2, character: 8 }],
      ],
    );
  });
});
