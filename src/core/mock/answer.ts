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
import type { LoadedAnswer } from "./stub-load";
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

/**
 * The message a document of an answer stands for, filled from the call, and its JSON (for the call
 * log). Read from JSON again only when the filled text differs from the last call's: a fixed
 * answer is read once, not once per call.
 */
const messagesRead = new WeakMap<StubDocument, { text: string; message: Message; json: JsonValue }>();

function answerMessage(
  doc: StubDocument,
  output: DescMessage,
  scope: TemplateScope,
  schema: MockSchema,
): { message: Message; json: JsonValue } {
  const text = fillTemplate(doc.text, scope, true, doc.line + 1);
  const known = messagesRead.get(doc);
  if (known?.text === text) return known;
  const message = messageFrom(output, text, schema, `${scope.where}:${doc.line + 1}`);
  const read = { text, message, json: toJson(output, message, { registry: schema.registry }) };
  messagesRead.set(doc, read);
  return read;
}

/** The error an answer ends with, details included. */
export function answerError(answer: LoadedAnswer, scope: TemplateScope, schema: MockSchema): ConnectError {
  const details = answer.details.map((d) => {
    const desc = schema.message(d.type) as DescMessage;
    const line = d.json.line + 1;
    return {
      desc,
      value: messageFrom(
        desc,
        fillTemplate(d.json.text, scope, true, line),
        schema,
        `${scope.where}:${line}`,
      ),
    };
  });
  const message = fillTemplate(answer.message, scope, false, answer.line + 1);
  return new ConnectError(message, codeOf(answer.status), undefined, details as never);
}

function setHeaders(answer: LoadedAnswer, ctx: HandlerContext, scope: TemplateScope): void {
  for (const h of answer.headers) {
    ctx.responseHeader.append(h.name.text, fillTemplate(h.value.text, scope, false, h.range.start.line + 1));
  }
}

function setTrailers(answer: LoadedAnswer, ctx: HandlerContext, scope: TemplateScope): void {
  for (const t of answer.trailers) {
    ctx.responseTrailer.append(t.name.text, fillTemplate(t.value.text, scope, false, t.range.start.line + 1));
  }
}

/** Whether an answer has no delay anywhere, so that it can be played at once (answerAtOnce). */
export function isImmediate(answer: LoadedAnswer): boolean {
  return answer.delayMs <= 0 && answer.messages.every((doc) => doc.delayMs <= 0);
}

/**
 * Plays an answer without delays in one step, as playAnswer would: headers, messages (their JSON to
 * `sent`), trailers; returns the last message (undefined when there is none) or throws its error.
 * A unary call answered this way makes no generator and waits for nothing.
 */
export function answerAtOnce(
  answer: LoadedAnswer,
  ctx: HandlerContext,
  output: DescMessage,
  scope: TemplateScope,
  schema: MockSchema,
  sent: JsonValue[],
): Message | undefined {
  setHeaders(answer, ctx, scope);
  let last: Message | undefined;
  for (const doc of answer.messages) {
    const { message, json } = answerMessage(doc, output, scope, schema);
    sent.push(json);
    last = message;
  }
  setTrailers(answer, ctx, scope);
  if (answer.status !== "ok") throw answerError(answer, scope, schema);
  return last;
}

/**
 * Sends an answer: yields its messages (as messages of `output`), with the answer's headers set
 * before the first and its trailers after the last; throws its error at the end when it has one.
 * `sent` receives each message's JSON, for the call log.
 */
export async function* playAnswer(
  answer: LoadedAnswer,
  ctx: HandlerContext,
  output: DescMessage,
  scope: TemplateScope,
  schema: MockSchema,
  sent: JsonValue[],
): AsyncGenerator<Message> {
  await wait(answer.delayMs, ctx);
  setHeaders(answer, ctx, scope);
  for (const doc of answer.messages) {
    await wait(doc.delayMs, ctx);
    const { message, json } = answerMessage(doc, output, scope, schema);
    sent.push(json);
    yield message;
  }
  setTrailers(answer, ctx, scope);
  if (answer.status !== "ok") throw answerError(answer, scope, schema);
}
