// How a failed call is described, in one place for every front end: what `protocall curl` prints on
// stderr (the Connect error JSON for a failure of the RPC itself, else one `protocall: …` line), its
// exit code, and the same facts as data for the editor (code name, one-line message, error details
// decoded with the call's schema). OpenSSL's TLS alerts are reworded here as Go words them; the
// deadline, cancellation and HTTP-status texts already come from the transport in buf's words
// (call-context.ts), so the CLI and the editor can never say different things.
import { createRegistry, fromBinary, type Registry } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { codeToString } from "@connectrpc/connect/protocol-connect";
import { errorMessage, ProtocallError } from "../errors";
import { InvalidHeaderValue } from "../header-line";
import type { Resolver } from "../schema/resolver";
import { createMessageFormatter } from "./output";
import { formatRpcError, rpcExitCode } from "./rpc-error";

/** An error detail: its type, its bytes (standard base64), and, when the type is known, its JSON. */
export interface CallErrorDetail {
  type: string;
  value: string;
  json?: string;
}

/** Where a call was when it failed: before the request went out, or during the RPC. */
export type CallPhase = "setup" | "call";

export interface CallFailure {
  /** The RPC status code name (`not_found`, …) for failures of the RPC; undefined for the others. */
  code?: string;
  /** What `protocall curl` exits with: the gRPC code × 8 for an RPC failure, else below 8 (mostly 1). */
  exitCode: number;
  /** One line: the RPC error's message, or the failure's (without the `protocall: ` prefix). */
  message: string;
  /** The RPC error's details (decoded to JSON only when asked for). */
  details: CallErrorDetail[];
  /** Exactly what `protocall curl` prints on stderr for it, ending with a newline. */
  text: string;
  /** For RPC failures: the metadata the server sent with the error (its headers and trailers). */
  metadata?: Headers;
  /** What was thrown, for callers that look deeper (and PROTOCALL_DEBUG's stack trace). */
  error: unknown;
}

/** Describes a failure. RPC errors of the call (and cancellation at any point) print as error JSON. */
export function describeFailure(err: unknown, phase: CallPhase): CallFailure {
  const undecodable = localParseFailure(err);
  if (undecodable) err = undecodable;
  if (
    err instanceof ConnectError &&
    (phase === "call" || err.code === Code.Canceled || err instanceof InvalidHeaderValue)
  ) {
    const shown = asBufWordsIt(err);
    return {
      code: codeToString(shown.code),
      exitCode: rpcExitCode(shown),
      message: shown.rawMessage,
      details: rawDetails(err),
      text: formatRpcError(shown),
      metadata: err.metadata,
      error: err,
    };
  }
  let message: string;
  let exitCode = 1;
  if (err instanceof ProtocallError) {
    message = err.message;
    exitCode = err.exitCode;
  } else if (err instanceof ConnectError) {
    message = err.rawMessage || err.message;
  } else {
    message = `unexpected error: ${errorMessage(err)}`;
  }
  return { exitCode, message, details: [], text: `protocall: ${message}\n`, error: err };
}

/**
 * A response message that does not decode is not an RPC status (buf: `Failure: wire unmarshal: …`,
 * exit 1). connect-es reports it as an `internal` error made on our side, which has no metadata (an
 * error the server sent always carries the response headers).
 */
function localParseFailure(err: unknown): ProtocallError | undefined {
  if (!(err instanceof ConnectError) || err.code !== Code.Internal) return undefined;
  const parse = /^parse binary: (.*)$/s.exec(err.rawMessage);
  let empty = true;
  err.metadata.forEach(() => {
    empty = false;
  });
  if (!parse || !empty) return undefined;
  return new ProtocallError(`cannot decode the response message: ${oneLine(parse[1])}`);
}

/**
 * What connect-es says about a broken response, as buf (connect-go) says it: code and wording.
 * A status outside gRPC's range is `unknown`, as the gRPC specification asks (buf prints `code_999`
 * and exits with 999 × 8 truncated to a byte).
 */
const protocolErrors: { match: RegExp; code: Code; text: (m: RegExpExecArray) => string }[] = [
  {
    match: /^protocol error: missing EndStreamResponse$/,
    code: Code.Internal,
    text: () => "protocol error: unexpected EOF",
  },
  { match: /^invalid grpc-status: .*$/, code: Code.Unknown, text: (m) => m[0] },
  // A Connect end of stream that does not parse (bad JSON, details that are not base64 messages):
  // the server's fault, `internal`, as connect-go says it (connect-es: `invalid_argument`).
  {
    match: /^failed to parse EndStreamResponse: (?:\[[a-z_]+\] )?(.*)$/s,
    code: Code.Internal,
    text: (m) => `unmarshal end stream message: ${oneLine(m[1])}`,
  },
  // connect-es's limit on a whole body (Connect unary; enveloped messages are refused earlier by
  // their length prefix, in the transport's own words).
  {
    match: /^message size (?:\d+ )?is larger than configured readMaxBytes (\d+)$/,
    code: Code.ResourceExhausted,
    text: (m) => `message is larger than configured max ${m[1]}`,
  },
];

/** The RPC error as buf prints it: connect-es's protocol errors in connect-go's words, and Go's TLS
 * wording for OpenSSL's multi-line alerts. HTTP statuses and deadlines arrive worded already
 * (call-context.ts). */
function asBufWordsIt(err: ConnectError): ConnectError {
  const raw = err.rawMessage;
  if (undecodableDetails(err)) {
    // grpc-status-details-bin that is not a google.rpc.Status: the server's fault, `internal`, as
    // connect-go says it (connect-es: `data_loss`, as if the server had sent that code).
    return new ConnectError(
      `server returned invalid protobuf for error details: ${oneLine(raw)}`,
      Code.Internal,
      err.metadata,
      undefined,
      err.cause,
    );
  }
  for (const p of protocolErrors) {
    const m = p.match.exec(raw);
    if (m) {
      const shown = new ConnectError(p.text(m), p.code, err.metadata, undefined, err.cause);
      shown.details = err.details;
      return shown;
    }
  }
  if (!/SSL routines/.test(raw)) return err;
  const shown = new ConnectError(oneLine(raw), err.code, err.metadata, undefined, err.cause);
  shown.details = err.details;
  return shown;
}

/**
 * connect-es's failure to decode grpc-status-details-bin: `data_loss` made on our side (no metadata,
 * caused by the protobuf decoder's error), unlike a `data_loss` the server sent (which has trailers).
 */
function undecodableDetails(err: ConnectError): boolean {
  if (err.code !== Code.DataLoss || err.cause instanceof ConnectError || !(err.cause instanceof Error)) {
    return false;
  }
  let empty = true;
  err.metadata.forEach(() => {
    empty = false;
  });
  return empty;
}

/**
 * One line, whatever a lower layer said: OpenSSL's multi-line errors become Go's short wording where
 * it is known (`remote error: tls: certificate required`).
 */
export function oneLine(text: string): string {
  const alert = text.match(
    /[0-9A-F]+:error:[0-9A-F]+:SSL routines:[^:]*:(?:tlsv1[0-9]? |sslv3 )?alert ([a-z ]+):[^\n]*(?:\n\s*SSL alert number \d+)?/,
  );
  const cleaned = alert ? text.replace(alert[0], `remote error: tls: ${alert[1]}`) : text;
  return cleaned.replace(/\s*\n\s*/g, " ").trim();
}

function rawDetails(err: ConnectError): CallErrorDetail[] {
  return detailBytes(err).map(({ type, value }) => ({ type, value: base64(value) }));
}

function detailBytes(err: ConnectError): { type: string; value: Uint8Array }[] {
  return err.details.map((d) =>
    "desc" in d ? { type: d.desc.typeName, value: new Uint8Array() } : { type: d.type, value: d.value },
  );
}

function base64(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("base64").replace(/=+$/, "");
}

/**
 * Decodes the failure's error details to JSON with the call's schema, then google.rpc's own types
 * (the editor shows them; the printed text never needs them). Details of unknown types keep their bytes.
 */
export async function decodeFailureDetails(failure: CallFailure, res: Resolver | undefined): Promise<void> {
  if (!(failure.error instanceof ConnectError) || failure.details.length === 0) return;
  const raw = detailBytes(failure.error);
  // Loaded here: `protocall curl` prints details undecoded and never needs these types.
  const { file_google_rpc_error_details } = await import("../../gen/google/rpc/error_details_pb");
  let registry: Registry = createRegistry(file_google_rpc_error_details);
  if (res) {
    try {
      registry = await res.registry(
        raw.map((d) => d.type),
        file_google_rpc_error_details,
      );
    } catch {
      // the google.rpc types still decode
    }
  }
  const formatter = createMessageFormatter({ resolveAny: (n) => registry.getMessage(n) });
  failure.details = raw.map(({ type, value }) => {
    const detail: CallErrorDetail = { type, value: base64(value) };
    const desc = registry.getMessage(type);
    if (desc) {
      try {
        detail.json = formatter(desc, fromBinary(desc, value));
      } catch {
        // shown by its bytes alone
      }
    }
    return detail;
  });
}
