// `--upstream URL`: calls that no stub answers go to the real server, and its answer comes back as it
// was sent: response headers, each message as it arrives (streams are passed through as they flow,
// in both directions), trailers, and errors with their code, message, metadata and details (the
// details' bytes untouched). Headers that belong to the protocol (content type, encodings, grpc-* and
// connect-*) are the transports' business on each side; every other header is passed on.
import type { DescMethod, Message } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext, type Transport } from "@connectrpc/connect";
import {
  createConnectTransport,
  createGrpcTransport,
  createGrpcWebTransport,
} from "@connectrpc/connect-node";
import { ProtocallError } from "../errors";
import { passedHeaders } from "../invoke/protocol-headers";

export type UpstreamProtocol = "grpc" | "connect" | "grpcweb";

export interface Upstream {
  readonly url: string;
  readonly protocol: UpstreamProtocol;
  /** The transport for a method (bidirectional streams need HTTP/2). */
  transport(method: DescMethod): Transport;
}

export function createUpstream(url: string, protocol: UpstreamProtocol = "grpc"): Upstream {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ProtocallError(
      `invalid --upstream ${JSON.stringify(url)}: give the server's base URL, such as http://127.0.0.1:9090`,
    );
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new ProtocallError(
      `invalid --upstream ${JSON.stringify(url)}: it must start with http:// or https://`,
    );
  }
  const baseUrl = url.replace(/\/+$/, "");
  const cache = new Map<string, Transport>();
  const make = (httpVersion: "1.1" | "2"): Transport => {
    const key = httpVersion;
    let t = cache.get(key);
    if (!t) {
      t =
        protocol === "grpc"
          ? createGrpcTransport({ baseUrl })
          : protocol === "connect"
            ? createConnectTransport({ baseUrl, httpVersion })
            : createGrpcWebTransport({ baseUrl, httpVersion });
      cache.set(key, t);
    }
    return t;
  };
  return {
    url: baseUrl,
    protocol,
    transport: (method) => make(method.methodKind === "bidi_streaming" ? "2" : "1.1"),
  };
}

function copyInto(target: Headers, from: Headers): void {
  passedHeaders(from).forEach((value, name) => {
    target.append(name, value);
  });
}

/** The upstream's error as this call's error: code, message, metadata and details as they came. */
function relayError(err: unknown, upstream: Upstream): ConnectError {
  const e = ConnectError.from(err);
  const unreachable =
    e.code === Code.Unavailable && e.details.length === 0 && e.metadata.get("grpc-status") === null;
  const out = new ConnectError(
    unreachable ? `${e.rawMessage} (upstream ${upstream.url})` : e.rawMessage,
    e.code,
    passedHeaders(e.metadata),
  );
  out.details.push(...e.details);
  return out;
}

/** Sends a call upstream; yields the answer's messages as they arrive. */
export async function* forward(
  upstream: Upstream,
  method: DescMethod,
  ctx: HandlerContext,
  input: Message | AsyncIterable<Message>,
  onMessage: (message: Message) => void,
): AsyncGenerator<Message> {
  const transport = upstream.transport(method);
  const header = passedHeaders(ctx.requestHeader);
  try {
    if (method.methodKind === "unary") {
      const res = await transport.unary(method as never, ctx.signal, ctx.timeoutMs(), header, input as never);
      copyInto(ctx.responseHeader, res.header);
      onMessage(res.message as Message);
      yield res.message as Message;
      copyInto(ctx.responseTrailer, res.trailer);
      return;
    }
    const stream =
      Symbol.asyncIterator in (input as object)
        ? (input as AsyncIterable<Message>)
        : (async function* () {
            yield input as Message;
          })();
    const res = await transport.stream(method as never, ctx.signal, ctx.timeoutMs(), header, stream as never);
    copyInto(ctx.responseHeader, res.header);
    for await (const m of res.message) {
      onMessage(m as Message);
      yield m as Message;
    }
    copyInto(ctx.responseTrailer, res.trailer);
  } catch (err) {
    throw relayError(err, upstream);
  }
}
