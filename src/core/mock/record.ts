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
import { stubAnswer, stubFile, stubRequest, type WrittenStub } from "../rpcfile/stub-writer";
import { type MockSchema, methodKey } from "./mock-schema";

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

export class Recorder {
  private readonly files = new Map<string, WrittenStub[]>();

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
    const request = stubRequest(
      methodKey(method),
      call.requests.map((m) => toJson(method.input, m as never, { registry })),
      method.methodKind === "bidi_streaming",
    );
    const details: { type: string; json: JsonValue }[] = [];
    for (const d of call.error?.details ?? []) {
      if (!("value" in d) || "desc" in d) continue;
      const desc = registry.getMessage(d.type);
      if (!desc) {
        this.log(`--record: cannot write a detail of type ${d.type} (not in the schema); left out`);
        continue;
      }
      details.push({ type: d.type, json: toJson(desc, fromBinary(desc, d.value), { registry }) });
    }
    const answer = stubAnswer({
      status: call.error ? (statusCodeNames[call.error.code] ?? "unknown") : "ok",
      message: call.error?.rawMessage,
      headers: call.responseHeader,
      trailers: call.error ? call.error.metadata : call.responseTrailer,
      details,
      responses: call.responses,
      streaming: method.methodKind !== "unary",
    });
    const file = this.fileOf(method);
    let stubs = this.files.get(file);
    if (!stubs) this.files.set(file, (stubs = []));
    const same = stubs.find((s) => s.request === request);
    if (same) same.answers.push(answer);
    else stubs.push({ request, answers: [answer] });
    writeFileSync(
      file,
      stubFile(
        stubs,
        "Recorded by protocall mock --record: answers of the upstream, replayed in order.",
        (i) => `recorded ${i + 1}`,
      ),
    );
  }
}
