// Property test of the parser: over 100,000 generated texts (random mixes of valid fragments and junk),
// parsing never fails, and every range lies within the text with its start before its end, and every
// token's text is exactly the text its range covers.
import assert from "node:assert/strict";
import { test } from "node:test";
import { parseRpcFile, splitLines } from "../../../src/core/rpcfile/parse";
import type { Position, Range } from "../../../src/core/rpcfile/types";
import { generate, rng } from "./fuzz-inputs";

function textAt(lines: string[], r: Range): string {
  if (r.start.line === r.end.line) return lines[r.start.line].slice(r.start.character, r.end.character);
  const out = [lines[r.start.line].slice(r.start.character)];
  for (let l = r.start.line + 1; l < r.end.line; l++) out.push(lines[l]);
  out.push(lines[r.end.line].slice(0, r.end.character));
  return out.join("\n");
}

function isPosition(v: unknown): v is Position {
  return typeof v === "object" && v !== null && "line" in v && "character" in v;
}

function isRange(v: unknown): v is Range {
  return (
    typeof v === "object" && v !== null && isPosition((v as Range).start) && isPosition((v as Range).end)
  );
}

function check(text: string, seed: number, i: number): number {
  const lines = splitLines(text);
  const bomFree = [...lines];
  if (bomFree[0]?.charCodeAt(0) === 0xfeff) bomFree[0] = ` ${bomFree[0].slice(1)}`;
  const result = parseRpcFile(text);
  let ranges = 0;
  const where = () => `seed ${seed}, input ${i}: ${JSON.stringify(text)}`;
  const inText = (p: Position) =>
    Number.isInteger(p.line) &&
    Number.isInteger(p.character) &&
    p.line >= 0 &&
    p.line < lines.length &&
    p.character >= 0 &&
    p.character <= lines[p.line].length;
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) {
      for (const x of v) visit(x);
      return;
    }
    if (typeof v !== "object" || v === null) return;
    if (isRange(v)) {
      ranges++;
      if (!inText(v.start) || !inText(v.end))
        assert.fail(`range out of the text ${JSON.stringify(v)}; ${where()}`);
      const ordered =
        v.start.line < v.end.line || (v.start.line === v.end.line && v.start.character <= v.end.character);
      if (!ordered) assert.fail(`range ends before it starts ${JSON.stringify(v)}; ${where()}`);
      return;
    }
    const o = v as Record<string, unknown>;
    if (typeof o.text === "string" && isRange(o.range) && o.kind !== "json") {
      visit(o.range);
      const covered = textAt(bomFree, o.range);
      if (covered !== o.text)
        assert.fail(`token ${JSON.stringify(o.text)} covers ${JSON.stringify(covered)}; ${where()}`);
    } else if (o.kind === "json" && typeof o.text === "string" && isRange(o.range)) {
      visit(o.range);
      // A document's text is what its range covers, lines joined by \n (an unclosed one is trimmed).
      const covered = textAt(bomFree, o.range);
      if (covered !== o.text && covered.trimEnd() !== o.text) {
        assert.fail(`document ${JSON.stringify(o.text)} covers ${JSON.stringify(covered)}; ${where()}`);
      }
    }
    // Every other range too (diagnostics, requests, bodies); a token's was checked above.
    for (const [k, x] of Object.entries(o)) if (k !== "range" || !(typeof o.text === "string")) visit(x);
  };
  visit(result);
  for (const d of result.diagnostics) {
    if (d.message.startsWith("internal parser error")) assert.fail(`${d.message}; ${where()}`);
    assert.ok(["error", "warning", "information", "hint"].includes(d.severity));
    assert.ok(d.message.length > 0);
  }
  return ranges;
}

test("the parser is total over 100,000 generated inputs, and every range and token is exact", {
  timeout: 120_000,
}, () => {
  const seed = 20261121;
  const next = rng(seed);
  let ranges = 0;
  let requests = 0;
  const total = 100_000;
  for (let i = 0; i < total; i++) {
    const text = generate(next);
    ranges += check(text, seed, i);
    if (i % 1000 === 0) requests += parseRpcFile(text).requests.length;
  }
  // The generator must exercise the parser: many ranges, and some inputs that hold requests.
  assert.ok(ranges > total, `only ${ranges} ranges checked`);
  assert.ok(requests > 10, `only ${requests} requests in sampled inputs`);
});
