// Writes stubs in the stub format of `protocall mock` (stub-syntax.ts reads them): the one writer
// behind `protocall mock --record` and `protocall proxy export --as stub`, so a recorded call and an
// exported one are the same text. A stub's request part is the method and the request messages as
// sent (a bidirectional stream's first message only: its stub is chosen on it); its answer is the
// status (with the error's message), the application's response headers, trailers as `# @trailer`,
// error details as `# @detail`, and the response messages.
import type { JsonValue } from "@bufbuild/protobuf";
import { passedHeaders } from "../invoke/protocol-headers";

export interface StubAnswer {
  /** `ok` or a status code name (`not_found`). */
  readonly status: string;
  /** The error's message (errors only). */
  readonly message?: string;
  readonly headers: Headers;
  readonly trailers: Headers;
  /** Error details, each as its type's full name and its JSON. */
  readonly details?: readonly { type: string; json: JsonValue }[];
  /** The response messages as proto JSON. */
  readonly responses: readonly JsonValue[];
  /** A streaming answer writes its (possibly empty) message list after an empty line. */
  readonly streaming: boolean;
}

/** A recorded stub: its request part (which identifies it) and its answers, in order. */
export interface WrittenStub {
  readonly request: string;
  readonly answers: string[];
}

/** The request part of a stub: the method path and the request messages to match. */
export function stubRequest(method: string, requests: readonly JsonValue[], bidi: boolean): string {
  const matched = bidi ? requests.slice(0, 1) : requests;
  return [`/${method}`, "", ...matched.map((m) => JSON.stringify(m))].join("\n");
}

function headerLines(headers: Headers, prefix = ""): string[] {
  const lines: string[] = [];
  passedHeaders(headers).forEach((value, name) => {
    if (/^trailer-/i.test(name)) return;
    lines.push(`${prefix}${name}: ${value.replace(/[\r\n]+/g, " ")}`);
  });
  return lines;
}

/** One answer of a stub, from its `>>>` line to its last message. */
export function stubAnswer(a: StubAnswer): string {
  const lines = [a.status === "ok" ? ">>> ok" : `>>> ${a.status} ${JSON.stringify(a.message ?? "")}`];
  lines.push(...headerLines(a.headers));
  lines.push(...headerLines(a.trailers, "# @trailer "));
  for (const d of a.details ?? []) lines.push(`# @detail ${d.type} ${JSON.stringify(d.json)}`);
  if (a.responses.length > 0 || (a.status === "ok" && a.streaming)) lines.push("");
  for (const r of a.responses) lines.push(JSON.stringify(r));
  return lines.join("\n");
}

/** A stub file: a comment line, then each stub (`### NAME`, request part, answers). */
export function stubFile(
  stubs: readonly WrittenStub[],
  comment: string,
  name: (i: number) => string,
): string {
  const text = stubs.map((s, i) => `### ${name(i)}\n${s.request}\n\n${s.answers.join("\n")}\n`).join("\n");
  return `# ${comment}\n\n${text}`;
}
