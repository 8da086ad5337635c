// Plays one answer of a stub on a call: waits its delay, sets its response headers, sends its messages
// (each after its own delay, with `{{...}}` filled from the request), sets its trailers, and ends with
// its status (an error with its message and typed details). Every wait ends when the call does: when
// the client's deadline (grpc-timeout, connect-timeout-ms) passes first, the call fails with
// deadline_exceeded as a real server's would, and nothing more is sent.
import { type DescMessage, fromJson, type JsonValue, type Message, toJson } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import { errorMessage } from "../errors";
import { statusCodeNames } from "../rpcfile/assertion-syntax";
import type { StubDocument } from "../rpcfile/stub-syntax";
import type { MockSchema } from "./mock-schema";
import type { LoadedAnswer, Stub } from "./stub-load";
import { fillTemplate, type TemplateScope } from "./template";

/** Waits `ms`, or fails with deadline_exceeded (or canceled) when the call ends first. */
export function wait(ms: number, ctx: HandlerContext): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const fail = () => {
      clearTimeout(timer);
      // The deadline passed (here or, a moment earlier, at the client, which then closed the stream),
      // or the client went away: either way nothing more is sent.
      const reason = ctx.signal.reason;
      const remaining = ctx.timeoutMs();
      const deadline =
        (reason instanceof ConnectError && reason.code === Code.DeadlineExceeded) ||
        (remaining !== undefined && remaining <= 0);
      reject(
        deadline
          ? new ConnectError("the call's deadline passed during the stub's delay", Code.DeadlineExceeded)
          : new ConnectError("the client ended the call during the stub's delay", Code.Canceled),
      );
    };
    const timer = setTimeout(() => {
      ctx.signal.removeEventListener("abort", fail);
      resolve();
    }, ms);
    if (ctx.signal.aborted) fail();
    else ctx.signal.addEventListener("abort", fail, { once: true });
  });
}

/** The Code of a status name. */
export function codeOf(status: string): Code {
  const i = statusCodeNames.indexOf(status);
  return (i < 0 ? Code.Unknown : i) as Code;
}

/** A message from the JSON of a stub, with a file:line error when it is not one. */
export function messageFrom(desc: DescMessage, text: string, schema: MockSchema, where: string): Message {
  try {
    return fromJson(desc, JSON.parse(text) as JsonValue, { registry: schema.registry });
  } catch (err) {
    throw new ConnectError(
      `${where}: the stub's message is not a ${desc.typeName}: ${errorMessage(err)}`,
      Code.Internal,
    );
  }
}

/** A message from proto JSON known to be valid (generated answers). */
export function messageOf(desc: DescMessage, json: JsonValue, schema: MockSchema): Message {
  return fromJson(desc, json, { registry: schema.registry });
}

/** Messages without references, read once: the same text is the same message on every call. */
const staticMessages = new WeakMap<StubDocument, { message: Message; json: JsonValue }>();

function staticMessage(
  doc: StubDocument,
  output: DescMessage,
  schema: MockSchema,
  stub: Stub,
): { message: Message; json: JsonValue } {
  let found = staticMessages.get(doc);
  if (!found) {
    const message = messageFrom(output, doc.text, schema, `${stub.file}:${doc.line + 1}`);
    found = { message, json: toJson(output, message, { registry: schema.registry }) };
    staticMessages.set(doc, found);
  }
  return found;
}

/** The error an answer ends with, details included. */
export function answerError(
  answer: LoadedAnswer,
  stub: Stub,
  scope: TemplateScope,
  schema: MockSchema,
): ConnectError {
  const details = answer.details.map((d) => {
    const desc = schema.message(d.type) as DescMessage;
    const where = `${stub.file}:${d.json.line + 1}`;
    return {
      desc,
      value: messageFrom(desc, fillTemplate(d.json.text, { ...scope, where }, true), schema, where),
    };
  });
  const message = fillTemplate(answer.message, { ...scope, where: `${stub.file}:${answer.line + 1}` }, false);
  return new ConnectError(message, codeOf(answer.status), undefined, details as never);
}

/**
 * Sends an answer: yields its messages (as messages of `output`), with the answer's headers set
 * before the first and its trailers after the last; throws its error at the end when it has one.
 * `sent` receives each message's JSON, for the call log.
 */
export async function* playAnswer(
  answer: LoadedAnswer,
  stub: Stub,
  ctx: HandlerContext,
  output: DescMessage,
  scope: TemplateScope,
  schema: MockSchema,
  sent: JsonValue[],
): AsyncGenerator<Message> {
  await wait(answer.delayMs, ctx);
  for (const h of answer.headers) {
    ctx.responseHeader.append(
      h.name.text,
      fillTemplate(h.value.text, { ...scope, where: `${stub.file}:${h.range.start.line + 1}` }, false),
    );
  }
  for (const doc of answer.messages) {
    await wait(doc.delayMs, ctx);
    const fixed = doc.text.includes("{{") ? undefined : staticMessage(doc, output, schema, stub);
    if (fixed) {
      sent.push(fixed.json);
      yield fixed.message;
      continue;
    }
    const where = `${stub.file}:${doc.line + 1}`;
    const message = messageFrom(output, fillTemplate(doc.text, { ...scope, where }, true), schema, where);
    sent.push(toJson(output, message, { registry: schema.registry }));
    yield message;
  }
  for (const t of answer.trailers) {
    ctx.responseTrailer.append(
      t.name.text,
      fillTemplate(t.value.text, { ...scope, where: `${stub.file}:${t.range.start.line + 1}` }, false),
    );
  }
  if (answer.status !== "ok") throw answerError(answer, stub, scope, schema);
}
