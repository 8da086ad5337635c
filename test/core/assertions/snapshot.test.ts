// The snapshot check's parts: the `# @snapshot` lines of a request (merged), the field-by-field diff
// (changed, missing and extra values, keys that need quoting), scrubbing with wildcards, and paths
// the diff prints being paths `ignore` accepts.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { diffSnapshots, ignoredValue, scrub } from "../../../src/core/assertions/snapshot";
import { parseRpcFile } from "../../../src/core/rpcfile/parse";
import { parseSnapshotPath } from "../../../src/core/rpcfile/snapshot-path";

describe("snapshots", () => {
  test("@snapshot lines add up; a wrong path is an error at its line", () => {
    const file = parseRpcFile(
      "# @snapshot ignore messages[*].id, error.message\n# @snapshot headers X-Request-Id\n# @snapshot ignore messages[\nhttp://h/a.B/C\n",
    );
    assert.deepEqual(file.requests[0].snapshot?.ignore, ["messages[*].id", "error.message"]);
    assert.deepEqual(file.requests[0].snapshot?.headers, ["x-request-id"]);
    assert.equal(file.requests[0].snapshot?.range.start.line, 0);
    const d = file.diagnostics.find((x) => x.message.includes('"messages[" is not a path'));
    assert.equal(d?.range.start.line, 2);
    assert.equal(parseRpcFile("http://h/a.B/C\n").requests[0].snapshot, undefined);
  });

  test("the diff names each changed, missing and extra value by path", () => {
    const diff = diffSnapshots(
      { status: "ok", messages: [{ a: 1, "odd key": "x" }, { a: 2 }], extra: true },
      { status: "ok", messages: [{ a: 1, "odd key": "y", b: [] }], more: null },
    );
    assert.deepEqual(diff, [
      { path: 'messages[0]["odd key"]', expected: "x", actual: "y" },
      { path: "messages[0].b", actual: [] },
      { path: "messages[1]", expected: { a: 2 } },
      { path: "extra", expected: true },
      { path: "more", actual: null },
    ]);
    for (const d of diff) assert.ok(parseSnapshotPath(d.path), d.path);
    assert.deepEqual(diffSnapshots({ a: [1] }, { a: [1] }), []);
  });

  test("scrub replaces values at paths, with [*] and .* wildcards, and leaves the input alone", () => {
    const value = {
      messages: [
        { id: "1", n: 1 },
        { id: "2", n: 2 },
      ],
      headers: { date: ["x"], keep: ["y"] },
    };
    const out = scrub(value, ["messages[*].id", "headers.date", "nothing.here", "messages[5].id"]);
    assert.deepEqual(out, {
      messages: [
        { id: ignoredValue, n: 1 },
        { id: ignoredValue, n: 2 },
      ],
      headers: { date: ignoredValue, keep: ["y"] },
    });
    assert.equal(value.messages[0].id, "1");
    assert.deepEqual(scrub({ m: { a: 1, b: 2 } }, ["m.*"]), { m: { a: ignoredValue, b: ignoredValue } });
  });
});
