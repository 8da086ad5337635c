// `--record DIR`: every call that went upstream is written as a stub, so that the mock, served later
// from DIR without the upstream, answers the same calls with the same messages, headers, trailers and
// errors. One file per method (`DIR/package.Service.Method.rpc`); a stub matches the recorded request
// message exactly as it was sent (every field it had); the same request recorded again adds an answer
// to its stub, so a replay gives the answers in the order they were recorded (a sequence).
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type DescMethod, fromBinary, type JsonValue, type Message, toJson } from "@bufbuild/protobuf";
import type { ConnectError } from "@connectrpc/connect";
import { statusCodeNames } from "../rpcfile/assertion-syntax";
import { type MockSchema, methodKey } from "./mock-schema";
import { passedHeaders } from "./upstream";

export interface RecordedCall {
  readonly method: DescMethod;
  /** The request messages as sent. */
  readonly requests: readonly Message[];
  readonly responseHeader: Headers;
  readonly responseTrailer: Headers;
  /** The response messages as proto JSON. */
  readonly responses: readonly JsonValue[];
  readonly error?: ConnectError;
}

interface RecordedStub {
  /** The request part, which identifies the stub. */
  readonly request: string;
  readonly answers: string[];
}

function headerLines(headers: Headers, prefix = ""): string[] {
  const lines: string[] = [];
  passedHeaders(headers).forEach((value, name) => {
    if (/^trailer-/i.test(name)) return;
    lines.push(`${prefix}${name}: ${value.replace(/[\r\n]+/g, " ")}`);
  });
  return lines;
}

export class Recorder {
  private readonly files = new Map<string, RecordedStub[]>();

  constructor(
    private readonly dir: string,
    private readonly schema: MockSchema,
    private readonly log: (line: string) => void = () => {},
  ) {
    mkdirSync(dir, { recursive: true });
  }

  /** The file of a method's recorded stubs. */
  fileOf(method: DescMethod): string {
    return join(this.dir, `${method.parent.typeName}.${method.name}.rpc`);
  }

  add(call: RecordedCall): void {
    const { method } = call;
    const registry = this.schema.registry;
    // A bidirectional stub is chosen on its first message, so only that one is recorded to match.
    const matched = method.methodKind === "bidi_streaming" ? call.requests.slice(0, 1) : call.requests;
    const body = matched.map((m) => JSON.stringify(toJson(method.input, m as never, { registry })));
    const request = [`/${methodKey(method)}`, "", ...body].join("\n");
    const status = call.error ? (statusCodeNames[call.error.code] ?? "unknown") : "ok";
    const lines = [call.error ? `>>> ${status} ${JSON.stringify(call.error.rawMessage)}` : ">>> ok"];
    lines.push(...headerLines(call.responseHeader));
    lines.push(...headerLines(call.error ? call.error.metadata : call.responseTrailer, "# @trailer "));
    for (const d of call.error?.details ?? []) {
      if (!("value" in d) || "desc" in d) continue;
      const desc = registry.getMessage(d.type);
      if (!desc) {
        this.log(`--record: cannot write a detail of type ${d.type} (not in the schema); left out`);
        continue;
      }
      const json = toJson(desc, fromBinary(desc, d.value), { registry });
      lines.push(`# @detail ${d.type} ${JSON.stringify(json)}`);
    }
    if (call.responses.length > 0 || (!call.error && method.methodKind !== "unary")) lines.push("");
    for (const r of call.responses) lines.push(JSON.stringify(r));
    const file = this.fileOf(method);
    let stubs = this.files.get(file);
    if (!stubs) this.files.set(file, (stubs = []));
    const same = stubs.find((s) => s.request === request);
    if (same) same.answers.push(lines.join("\n"));
    else stubs.push({ request, answers: [lines.join("\n")] });
    this.write(file, stubs);
  }

  private write(file: string, stubs: RecordedStub[]): void {
    const text = stubs
      .map((s, i) => `### recorded ${i + 1}\n${s.request}\n\n${s.answers.join("\n")}\n`)
      .join("\n");
    writeFileSync(
      file,
      `# Recorded by protocall mock --record: answers of the upstream, replayed in order.\n\n${text}`,
    );
  }
}
