// Snapshot tests (`# @snapshot`): a request's response — its status, messages, error and the headers
// and trailers the request names — is stored in a JSON file next to the request file on the first
// run, and later runs are compared with it field by field; each difference names its path
// (`messages[0].greeting`), which `# @snapshot ignore <paths>` (../rpcfile/snapshot-path.ts) can
// scrub. The check is one more check of the checked-request runner (checked-request.ts), so
// `protocall run`, Send and the Test Explorer agree, and the reports carry its differences.
//
// The file, `<name>.snapshots.json` beside `<name>.rpc`, holds every snapshot of that request file
// under its request's name (else `request N`), sorted, two-space indented, so it diffs well in review.
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { JsonValue } from "@bufbuild/protobuf";
import { ProtocallError } from "../errors";
import { parseSnapshotPath, type SnapshotStep, showSnapshotPath } from "../rpcfile/snapshot-path";
import type { Range, RpcRequest } from "../rpcfile/types";
import { type CheckResult, show } from "./evaluate";
import type { CallOutcome, HeaderPair } from "./outcome";

/** Where a request's snapshot is kept and what it holds. */
export interface SnapshotSpec {
  /** The snapshot file (snapshotFileOf). */
  file: string;
  /** The request's entry in it. */
  key: string;
  /** Paths scrubbed before storing and comparing. */
  ignore: readonly string[];
  /** Header and trailer names to store (lower case). */
  headers: readonly string[];
  /** The `# @snapshot` line, where the check is reported. */
  range: Range;
}

/** One difference: absent `expected` = a value the stored snapshot lacks, absent `actual` = one the response lacks. */
export interface SnapshotDifference {
  path: string;
  expected?: JsonValue;
  actual?: JsonValue;
}

/** What a scrubbed value is stored as. */
export const ignoredValue = "<ignored>";

const fileVersion = 1;

/** The snapshot file of a request file: `dir/name.snapshots.json` for `dir/name.rpc`. */
export function snapshotFileOf(rpcPath: string): string {
  const name = basename(rpcPath).replace(/\.rpc$/i, "");
  return join(dirname(rpcPath), `${name}.snapshots.json`);
}

/** The entry name of a request: its name, else `request N` (from 1). */
export function snapshotKeyOf(request: Pick<RpcRequest, "name" | "index">): string {
  return request.name?.text ?? `request ${request.index + 1}`;
}

/** The spec of a request with `# @snapshot`; undefined for one without. */
export function snapshotSpecOf(request: RpcRequest, rpcPath: string): SnapshotSpec | undefined {
  if (!request.snapshot) return undefined;
  return {
    file: snapshotFileOf(rpcPath),
    key: snapshotKeyOf(request),
    ignore: request.snapshot.ignore,
    headers: request.snapshot.headers,
    range: request.snapshot.range,
  };
}

/** The stored form of a response: status, messages, error, chosen headers and trailers; scrubbed. */
export function responseSnapshot(
  outcome: CallOutcome,
  spec: Pick<SnapshotSpec, "ignore" | "headers">,
): JsonValue {
  const out: { [k: string]: JsonValue } = { status: outcome.status ?? null };
  if (spec.headers.length > 0) {
    out.headers = chosen(outcome.headers, spec.headers);
    out.trailers = chosen(outcome.trailers, spec.headers);
  }
  out.messages = [...outcome.messages];
  if (outcome.error) {
    out.error = {
      code: outcome.error.code,
      message: outcome.error.message,
      details: outcome.error.details.map((d) => {
        const detail: { [k: string]: JsonValue } = { type: d.type };
        if (d.json !== undefined) detail.json = d.json;
        if (d.value !== undefined) detail.value = d.value;
        return detail;
      }),
    };
  }
  return scrub(out, spec.ignore);
}

function chosen(pairs: readonly HeaderPair[], names: readonly string[]): JsonValue {
  const out: { [k: string]: JsonValue } = {};
  for (const name of names) {
    const values = pairs.filter(([n]) => n.toLowerCase() === name).map(([, v]) => v);
    if (values.length > 0) out[name] = values;
  }
  return out;
}

/** A copy of `value` with every value at one of `paths` replaced by "<ignored>". */
export function scrub(value: JsonValue, paths: readonly string[]): JsonValue {
  let out = structuredClone(value);
  for (const path of paths) {
    const steps = parseSnapshotPath(path);
    if (steps) out = scrubAt(out, steps);
  }
  return out;
}

function scrubAt(value: JsonValue, steps: readonly SnapshotStep[]): JsonValue {
  if (steps.length === 0) return ignoredValue;
  const [s, ...rest] = steps;
  if (Array.isArray(value)) {
    if ("index" in s) {
      if (s.index < value.length) value[s.index] = scrubAt(value[s.index], rest);
    } else if ("any" in s) {
      for (let i = 0; i < value.length; i++) value[i] = scrubAt(value[i], rest);
    }
    return value;
  }
  if (value !== null && typeof value === "object") {
    const keys = "key" in s ? [s.key] : "any" in s ? Object.keys(value) : [];
    for (const k of keys) if (k in value) value[k] = scrubAt(value[k] as JsonValue, rest);
  }
  return value;
}

/** The differences between a stored snapshot and a new one, field by field, in path order. */
export function diffSnapshots(expected: JsonValue, actual: JsonValue): SnapshotDifference[] {
  const out: SnapshotDifference[] = [];
  diffAt(expected, actual, [], out);
  return out;
}

function diffAt(e: JsonValue, a: JsonValue, path: (string | number)[], out: SnapshotDifference[]): void {
  if (Array.isArray(e) && Array.isArray(a)) {
    for (let i = 0; i < Math.max(e.length, a.length); i++) {
      const p = [...path, i];
      if (i >= a.length) out.push({ path: showSnapshotPath(p), expected: e[i] });
      else if (i >= e.length) out.push({ path: showSnapshotPath(p), actual: a[i] });
      else diffAt(e[i], a[i], p, out);
    }
    return;
  }
  if (isObject(e) && isObject(a)) {
    const keys = [...new Set([...Object.keys(e), ...Object.keys(a)])];
    for (const k of keys) {
      const p = [...path, k];
      if (!(k in a)) out.push({ path: showSnapshotPath(p), expected: e[k] as JsonValue });
      else if (!(k in e)) out.push({ path: showSnapshotPath(p), actual: a[k] as JsonValue });
      else diffAt(e[k] as JsonValue, a[k] as JsonValue, p, out);
    }
    return;
  }
  if (JSON.stringify(e) !== JSON.stringify(a))
    out.push({ path: showSnapshotPath(path) || "(the response)", expected: e, actual: a });
}

function isObject(v: JsonValue): v is { [k: string]: JsonValue } {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** One line per difference: `messages[0].greeting: expected "Hello", got "Hi"`. */
export function differenceLine(d: SnapshotDifference): string {
  if (d.actual === undefined) return `${d.path}: expected ${show(d.expected ?? null)}, got nothing`;
  if (d.expected === undefined) return `${d.path}: not in the snapshot, got ${show(d.actual)}`;
  return `${d.path}: expected ${show(d.expected)}, got ${show(d.actual)}`;
}

/** The snapshots of a file by request; empty when it does not exist. Throws ProtocallError for a broken file. */
export function readSnapshots(file: string): Record<string, JsonValue> {
  if (!existsSync(file)) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, "utf8"));
  } catch (e) {
    throw new ProtocallError(
      `${file} is not valid JSON (${(e as Error).message}); fix it, or delete it to record the snapshots again`,
    );
  }
  const requests = (parsed as { requests?: unknown } | null)?.requests;
  if (!requests || typeof requests !== "object" || Array.isArray(requests)) {
    throw new ProtocallError(
      `${file} is not a snapshot file (it has no "requests" object); delete it to record the snapshots again`,
    );
  }
  return requests as Record<string, JsonValue>;
}

/** The text of the snapshot file with one request's snapshot set, the others kept (what Accept would write). */
export function snapshotFileText(file: string, key: string, snapshot: JsonValue): string {
  const requests = readSnapshots(file);
  requests[key] = snapshot;
  const sorted: Record<string, JsonValue> = {};
  for (const k of Object.keys(requests).sort()) sorted[k] = requests[k];
  return `${JSON.stringify({ version: fileVersion, requests: sorted }, null, 2)}\n`;
}

/** Stores one request's snapshot, keeping the file's others (written to a temporary file, then renamed). */
export function writeSnapshot(file: string, key: string, snapshot: JsonValue): void {
  const text = snapshotFileText(file, key, snapshot);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, file);
}

/**
 * The snapshot check of a call that got a status: written when there is none yet (or when `update`),
 * else compared. `actual` of the result is the new snapshot (what Accept stores).
 */
export function checkSnapshot(outcome: CallOutcome, spec: SnapshotSpec, update: boolean): CheckResult {
  const base = { kind: "snapshot" as const, text: "snapshot", range: spec.range };
  const actual = responseSnapshot(outcome, spec);
  let stored: JsonValue | undefined;
  try {
    stored = readSnapshots(spec.file)[spec.key];
    if (stored === undefined || update) {
      writeSnapshot(spec.file, spec.key, actual);
      const what = stored === undefined ? "written" : "updated";
      return {
        ...base,
        passed: true,
        found: true,
        actual,
        message: `snapshot ${what}: ${spec.file} (${spec.key})`,
      };
    }
  } catch (e) {
    const message =
      e instanceof ProtocallError ? e.message : `cannot write ${spec.file}: ${(e as Error).message}`;
    return { ...base, passed: false, found: false, message: `snapshot: ${message}` };
  }
  const diff = diffSnapshots(stored, actual);
  if (diff.length === 0) return { ...base, passed: true, found: true, actual, message: "snapshot matches" };
  const shown = diff.slice(0, 3).map(differenceLine).join("; ");
  const more = diff.length > 3 ? `; and ${diff.length - 3} more` : "";
  return {
    ...base,
    passed: false,
    found: true,
    actual,
    diff,
    message: `snapshot differs at ${diff.length} ${diff.length === 1 ? "path" : "paths"}: ${shown}${more} (run with --update-snapshots, or Accept in the editor, to take the new response)`,
  };
}
