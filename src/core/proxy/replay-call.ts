// `protocall proxy replay ID [--to URL]`: a stored call is sent again through the one call pipeline
// (the request messages as JSON, the client's own headers, the same protocol and HTTP version), and
// its answer is compared with the recorded one: the status (and an error's message), each response
// message field by field, and the application's trailers. Nothing is compared that the protocol
// sets itself (dates, encodings, grpc-* and connect-* headers).
import { ProtocallError } from "../errors";
import { callConnections } from "../invoke/connections";
import type { InputIo } from "../invoke/io";
import { defaultCurlOptions } from "../invoke/options";
import { runPipeline } from "../invoke/pipeline";
import { passedHeaders } from "../invoke/protocol-headers";
import { createVerboseLog } from "../invoke/verbose";
import { answerMetadata } from "./answer-metadata";
import type { ProxiedCall } from "./call-store";
import { hasRaw, userHeaders } from "./export-call";

export interface ReplayOptions {
  /** The server to send to (a base URL); default the call's upstream. */
  readonly to?: string;
  /** `--schema` values (default: the server's reflection). */
  readonly schemas?: string[];
  readonly cacert?: string;
  readonly insecure?: boolean;
  readonly io: InputIo;
  readonly product?: string;
  readonly signal?: AbortSignal;
}

/** What a call answered, in the terms replay compares. */
export interface Answer {
  readonly status: string;
  readonly message?: string;
  readonly messages: readonly unknown[];
  readonly trailers: Record<string, string>;
}

export interface ReplayResult {
  readonly url: string;
  readonly recorded: Answer;
  readonly replayed: Answer;
  /** One line per difference; empty when the answers are the same. */
  readonly differences: string[];
}

function record(h: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  passedHeaders(h).forEach((v, k) => {
    out[k] = v;
  });
  return out;
}

/** The recorded answer of a call. */
export function recordedAnswer(call: ProxiedCall): Answer {
  const { headers, trailers } = answerMetadata(call);
  const connectUnaryError =
    call.status !== "ok" &&
    call.protocol === "connect" &&
    !/^application\/connect\+/.test(call.requestHeaders["content-type"] ?? "");
  // An error's metadata is its headers and trailers together, as a client sees it.
  const metadata = call.status === "ok" ? trailers : new Headers([...headers, ...trailers]);
  return {
    status: call.status,
    ...(call.status !== "ok" ? { message: call.statusMessage ?? "" } : {}),
    messages: connectUnaryError ? [] : (call.decoded?.response ?? []),
    trailers: record(metadata),
  };
}

const show = (v: unknown) => (v === undefined ? "nothing" : JSON.stringify(v));

/** The differences between two JSON values, field by field, each as `path: old → new`. */
export function jsonDifferences(path: string, a: unknown, b: unknown, out: string[] = []): string[] {
  const isObject = (v: unknown): v is Record<string, unknown> =>
    typeof v === "object" && v !== null && !Array.isArray(v);
  if (isObject(a) && isObject(b)) {
    for (const k of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort())
      jsonDifferences(`${path}.${k}`, a[k], b[k], out);
  } else if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) jsonDifferences(`${path}[${i}]`, a[i], b[i], out);
  } else if (JSON.stringify(a) !== JSON.stringify(b)) {
    out.push(`${path}: ${show(a)} → ${show(b)}`);
  }
  return out;
}

/** How the replayed answer differs from the recorded one (empty when it does not). */
export function compareAnswers(recorded: Answer, replayed: Answer): string[] {
  const out: string[] = [];
  if (recorded.status !== replayed.status) out.push(`status: ${recorded.status} → ${replayed.status}`);
  else if (recorded.message !== replayed.message)
    out.push(`error message: ${show(recorded.message)} → ${show(replayed.message)}`);
  if (recorded.messages.length !== replayed.messages.length)
    out.push(`messages: ${recorded.messages.length} → ${replayed.messages.length}`);
  for (let i = 0; i < Math.max(recorded.messages.length, replayed.messages.length); i++)
    jsonDifferences(`message[${i}]`, recorded.messages[i], replayed.messages[i], out);
  for (const k of [
    ...new Set([...Object.keys(recorded.trailers), ...Object.keys(replayed.trailers)]),
  ].sort()) {
    if (recorded.trailers[k] !== replayed.trailers[k])
      out.push(`trailer ${k}: ${show(recorded.trailers[k])} → ${show(replayed.trailers[k])}`);
  }
  return out;
}

/** Sends the call again and compares the answers. Throws a ProtocallError when it cannot be sent. */
export async function replayCall(call: ProxiedCall, options: ReplayOptions): Promise<ReplayResult> {
  const request = call.decoded?.request ?? [];
  if (request.some(hasRaw))
    throw new ProtocallError(
      `call ${call.id} has request messages the schema could not decode, so they cannot be sent again: run the proxy with --schema for ${call.method}`,
    );
  const base = (options.to ?? call.upstream).replace(/\/$/, "");
  const url = `${base}/${call.method}`;
  const o = defaultCurlOptions();
  o.url = url;
  o.protocol = call.protocol;
  o.http2PriorKnowledge = call.httpVersion === "2" && base.startsWith("http:");
  o.headers = userHeaders(call, false).map(([k, v]) => `${k}: ${v}`);
  o.data = request.map((m) => JSON.stringify(m)).join("\n");
  o.schemas = options.schemas ?? [];
  o.cacert = options.cacert;
  if (options.insecure) o.insecure = true;
  const messages: unknown[] = [];
  const result = await runPipeline(o, options.io, {
    log: createVerboseLog(false, () => {}),
    connections: callConnections(),
    product: options.product,
    signal: options.signal,
    onMessage: (json) => {
      messages.push(JSON.parse(json));
    },
  });
  const failure = result.failure;
  if (failure && failure.code === undefined)
    throw new ProtocallError(`cannot replay call ${call.id} to ${url}: ${failure.message}`);
  const replayed: Answer = failure
    ? {
        status: failure.code as string,
        message: failure.message,
        messages,
        trailers: record(failure.metadata ?? new Headers()),
      }
    : { status: "ok", messages, trailers: record(result.trailers ?? new Headers()) };
  const recorded = recordedAnswer(call);
  return { url, recorded, replayed, differences: compareAnswers(recorded, replayed) };
}
