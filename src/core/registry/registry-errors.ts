// What a failed registry call tells the user, worded as the buf CLI words it for each code (so a user
// who knows buf's messages recognises them, and the same set-up fixes both), on one line:
//   not_found       GetCommits/GetGraph: the server's message alone; Download: prefixed with
//                   `could not get module data for remote module "<name>": `; others: `not_found: <msg>`
//   unauthenticated which token was refused and how to set another (BUF_TOKEN, PROTOCALL_TOKEN, netrc,
//                   the editor's sign-in), or how to set one when none was sent
//   unimplemented   the registry does not serve the API (buf prints five lines; one here)
//   unavailable     the server hosted at that remote is unavailable (connection refused, no such host)
//   TLS             buf's `tls certificate verification: ...` text, with how to trust the CA
//   anything else   `<code>: <message>`
import { Code, ConnectError } from "@connectrpc/connect";
import { ProtocallError } from "../errors";
import { x509Problem } from "../invoke/node-errors";
import type { RegistryToken } from "./token";

export type RegistryRpc =
  | "GetCommits"
  | "GetGraph"
  | "Download"
  | "GetModules"
  | "GetOwners"
  | "ListCommits"
  | "ListLabels";

export interface FailureContext {
  readonly rpc: RegistryRpc;
  /** The procedure's full URL, for unimplemented. */
  readonly url: string;
  /** `host[:port]` */
  readonly remote: string;
  readonly token?: RegistryToken;
  /** The module whose data a Download was for (`remote/owner/module`). */
  readonly module?: string;
  /** The largest response the client reads (for an oversize response's message). */
  readonly maxBytes?: number;
  /** The caller's abort reason when the call was ended by the caller (a deadline, Ctrl-C). */
  readonly aborted?: unknown;
}

const docs = "For details, visit https://buf.build/docs/bsr/authentication";

/** A Connect code as written on the wire and by buf: `not_found`, `permission_denied`, … */
export function codeName(code: Code): string {
  return (Code[code] ?? "unknown").replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase();
}

/** Node's TLS verification failures, as Go words them (the table the calls use, node-errors.ts). */
function tlsProblem(codes: readonly string[]): string | undefined {
  for (const code of codes) {
    if (code === "ERR_TLS_CERT_ALTNAME_INVALID") {
      return "x509: certificate is not valid for the registry's host name";
    }
    const problem = x509Problem(code);
    if (problem) return problem;
  }
  return undefined;
}

/** The `code` properties along an error's cause chain. */
function causeCodes(err: unknown): string[] {
  const out: string[] = [];
  const seen = new Set<unknown>();
  for (let e = err; e instanceof Error && !seen.has(e); e = (e as Error).cause) {
    seen.add(e);
    const code = (e as NodeJS.ErrnoException).code;
    if (typeof code === "string") out.push(code);
  }
  return out;
}

/** The error to show for a registry call that failed with `err`. */
export function registryFailure(err: unknown, ctx: FailureContext): ProtocallError {
  if (err instanceof ProtocallError) return err;
  if (ctx.aborted instanceof ProtocallError) return ctx.aborted;
  const codes = causeCodes(err);
  const tls = tlsProblem(codes);
  if (tls) {
    return new ProtocallError(
      `tls certificate verification: tls: failed to verify certificate: ${tls}; trust the registry's certificate authority with SSL_CERT_FILE (or --cacert)`,
    );
  }
  const e = ConnectError.from(err);
  const message = e.rawMessage;
  if (
    codes.some((c) =>
      ["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"].includes(c),
    ) ||
    (e.code === Code.Unavailable && !codes.length)
  ) {
    const why = codes.includes("ECONNREFUSED")
      ? "connection refused"
      : codes.some((c) => c === "ENOTFOUND" || c === "EAI_AGAIN")
        ? "no such host"
        : message;
    return new ProtocallError(
      `the server hosted at that remote is unavailable (https://${ctx.remote}: ${why}); check the remote's name and port, and that the registry runs`,
    );
  }
  const download =
    ctx.rpc === "Download" && ctx.module
      ? `could not get module data for remote module "${ctx.module}": `
      : "";
  if (e.code === Code.ResourceExhausted && /larger than configured readMaxBytes/.test(message)) {
    const limit = ctx.maxBytes ? ` (${Math.round(ctx.maxBytes / (1024 * 1024))} MiB)` : "";
    return new ProtocallError(
      `${download}the registry at https://${ctx.remote} sent a ${ctx.rpc} response larger than Protocall reads${limit}; nothing was cached`,
    );
  }
  // connect-es's wording of a body that is not a Connect message, in buf's (connect-go's) words.
  const contentType = /^unsupported content type (.*)$/.exec(message);
  if (contentType) {
    return new ProtocallError(
      `${download}${codeName(e.code)}: invalid content-type: "${contentType[1]}"; expecting "application/proto" (https://${ctx.remote} answered ${ctx.rpc} with something that is not the module API)`,
    );
  }
  switch (e.code) {
    case Code.Unauthenticated:
      return new ProtocallError(unauthenticated(ctx));
    case Code.Unknown:
      if (message === "") return new ProtocallError(unauthenticated(ctx));
      break;
    case Code.NotFound:
      return new ProtocallError(
        download
          ? `${download}${message}`
          : ctx.rpc === "GetCommits" || ctx.rpc === "GetGraph"
            ? message || "not_found"
            : `not_found: ${message}`,
      );
    case Code.Unimplemented:
      return new ProtocallError(
        `unimplemented: ${message === "HTTP 404" ? "404 Not Found" : message} for ${ctx.url}; ` +
          `the registry at https://${ctx.remote} does not serve the module API (buf.registry.module.v1) that buf 1.75 and Protocall use: ask its site admin to upgrade the instance`,
      );
    case Code.DeadlineExceeded:
      return new ProtocallError(
        `the registry at https://${ctx.remote} did not answer ${ctx.rpc} in time; try again, or check the registry`,
      );
  }
  return new ProtocallError(`${download}${codeName(e.code)}: ${message}`);
}

function unauthenticated(ctx: FailureContext): string {
  const r = ctx.remote;
  switch (ctx.token?.origin) {
    case "BUF_TOKEN":
    case "PROTOCALL_TOKEN": {
      const name = ctx.token.origin;
      return `the ${name} environment variable is not valid for ${r}. Set ${name} to a valid Buf API token, or unset it. ${docs}`;
    }
    case "netrc":
      return `your Buf API token for ${r} is invalid. Run "buf registry login ${r}" using a valid Buf API token. ${docs}`;
    case "editor":
      return `the token the editor holds for ${r} was refused: sign in to ${r} again (Webhooks view) with a valid Buf API token`;
    default:
      return `you are not authenticated for ${r}. Set the BUF_TOKEN environment variable or run "buf registry login ${r}", using a Buf API token as the password. ${docs}`;
  }
}

/** A response that breaks the module API's contract (what buf would refuse too). */
export function invalidResponse(remote: string, rpc: RegistryRpc, problem: string): ProtocallError {
  return new ProtocallError(
    `the registry at https://${remote} sent an invalid ${rpc} response: ${problem}; nothing was cached`,
  );
}
