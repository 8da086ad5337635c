import assert from "node:assert/strict";
import { test } from "node:test";
import { parseRpcFile } from "../../../src/core/rpcfile/parse";
import { requestAt } from "../../../src/core/rpcfile/request-at";

test("requestAt finds the request holding a line, and nothing between or outside requests", () => {
  const text =
    "@h = x\n\n### a\nhttp://h/s.S/A\n\n{}\n\n\n### b\n# @insecure\nhttps://h/s.S/B\n### c\nhttp://h/s.S/C\n";
  const f = parseRpcFile(text);
  const at = (line: number) => requestAt(f, { line, character: 0 })?.name?.text;
  assert.deepEqual(
    Array.from({ length: 14 }, (_, i) => at(i)),
    [undefined, undefined, "a", "a", "a", "a", undefined, undefined, "b", "b", "b", "c", "c", undefined],
  );
  assert.equal(requestAt(parseRpcFile(""), { line: 0, character: 0 }), undefined);
});
