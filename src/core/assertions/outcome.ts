// What a call's assertions are checked against: a plain object that any front end can build from
// its call result (the CLI's run, the editor's call session, a test), so the evaluator knows no
// transport and no schema. Paths in `@assert` and `@capture` name its parts (assertion-syntax.ts).
import type { JsonValue } from "@bufbuild/protobuf";

/** A header or trailer as received: name and value, repeated names as separate pairs. */
export type HeaderPair = readonly [name: string, value: string];

/** An error detail: its full type name and, when the type is known, its proto JSON. */
export interface OutcomeDetail {
  /** Full message name, such as `google.rpc.BadRequest` (without a type URL prefix). */
  type: string;
  /** The detail as proto JSON (an object), when its type could be decoded. */
  json?: JsonValue;
  /** The detail's bytes in standard base64, for a type that could not be decoded. */
  value?: string;
}

export interface CallOutcome {
  /**
   * The RPC status code name (`ok`, `not_found`, …). Undefined when the call failed before or outside
   * an RPC (a refused connection, an unknown method); then `failure` says why.
   */
  status?: string;
  headers: readonly HeaderPair[];
  trailers: readonly HeaderPair[];
  /**
   * The response messages as proto JSON, in order, with fields at their default values included
   * (so `message.count == 0` holds for a zero count, which plain proto JSON would leave out).
   */
  messages: readonly JsonValue[];
  /** The RPC error; absent when the status is ok. */
  error?: { code: string; message: string; details: readonly OutcomeDetail[] };
  /** How long the call took, in milliseconds. */
  durationMs: number;
  /** Why the call failed outside the RPC (no status), as one line. */
  failure?: string;
}
