// `protocall proxy`: a reverse proxy that passes Connect, gRPC and gRPC-Web calls through unchanged,
// decodes them with the schema, prints one line per call and keeps each in a durable store; plus
// `proxy list`, `proxy show ID`, `proxy export ID --as rpc|stub|curl|buf-curl` and `proxy replay ID`
// over that store.
import { join, resolve } from "node:path";
import { ProtocallError } from "../../core/errors";
import { redactHeaderValue, redactSecrets } from "../../core/invoke/redact";
import type { ProxiedCall } from "../../core/proxy/call-store";
import type { ExportFormat } from "../../core/proxy/export-call";
import { configDir } from "../../core/serve/self-signed";
import { defineFlags, flagsHelp, parseArgs, runSubcommand } from "../args";
import type { CliContext, Command } from "../context";
import { callIo, readFlagFile, untilStopped } from "../io";
import { checkServerFlags, serverFlags, serverTls } from "./server-flags";

const { host, port, tls, cert, key } = serverFlags;

const storeFlag = defineFlags({
  store: {
    kind: "string",
    value: "FILE",
    defaultText: "proxy.store in the config directory",
    help: "the call store",
  },
});

const serveFlags = defineFlags({
  upstream: {
    kind: "string",
    value: "URL",
    required: true,
    help: "the server to pass calls to (http:// or https://)",
  },
  host,
  port,
  tls: {
    ...tls,
    help: "serve https with a self-signed certificate, generated once and kept in the config directory (proxy-cert.pem); its path and SHA-256 fingerprint are printed",
  },
  cert,
  key,
  schema: {
    kind: "strings",
    value: "SOURCE",
    help: "decode calls with this schema (directory, .proto, descriptor set, registry module; repeatable) instead of the upstream's reflection",
  },
  cacert: {
    kind: "string",
    value: "FILE",
    help: "PEM file of the authorities that sign the upstream's certificate",
  },
  insecure: { kind: "bool", short: "k", help: "do not verify the upstream's TLS certificate" },
  "max-store": {
    kind: "size",
    defaultText: "64MiB",
    help: "size limit of the store; the oldest calls are pruned past it",
  },
  ...storeFlag,
});

const exportFlags = defineFlags({
  ...storeFlag,
  as: { kind: "string", choices: ["rpc", "stub", "curl", "buf-curl"], default: "rpc", help: "what to write" },
});

const replayFlags = defineFlags({
  ...storeFlag,
  to: {
    kind: "string",
    value: "URL",
    defaultText: "the call's upstream",
    help: "send the call to this server instead",
  },
  schema: {
    kind: "strings",
    value: "SOURCE",
    help: "encode the request and decode the answer with this schema instead of the server's reflection",
  },
  cacert: {
    kind: "string",
    value: "FILE",
    help: "PEM file of the authorities that sign the server's certificate",
  },
  insecure: { kind: "bool", short: "k", help: "do not verify the server's TLS certificate" },
});

const help = `Pass Connect, gRPC and gRPC-Web calls through to a server, decoded and recorded.

Usage: protocall proxy --upstream URL [--port P] [--host H] [--tls | --cert F --key F] [--schema S]... [--store FILE]
       protocall proxy list [--store FILE]
       protocall proxy show ID [--store FILE]
       protocall proxy export ID [--as rpc|stub|curl|buf-curl] [--store FILE]
       protocall proxy replay ID [--to URL] [--schema S]... [--store FILE]

Point a client at the proxy instead of the server: every call goes through unchanged (headers,
messages as they flow, trailers; a cancelled call is cancelled upstream), over HTTP/1.1, h2c or
TLS. Each call is decoded with the upstream's reflection (or --schema), stored durably before its
line is printed (method, protocol, status, duration, bytes sent and received), and can be shown or
exported as a .rpc request with assertions for what was observed, a stub for \`protocall mock\`, or
a curl command line. Messages the schema cannot decode are kept as raw wire fields. Secrets are
redacted when shown.

Flags (proxy):
${flagsHelp(serveFlags)}
Flags (export):
${flagsHelp(exportFlags)}
\`replay\` sends a stored call again (its request messages and headers, over its protocol) and
prints what differs from the recorded answer: the status and error message, each response message
field by field, the trailers. Exit code: 0 the same, 1 different, 2 it could not be sent.

Flags (replay):
${flagsHelp(replayFlags)}`;

function storePath(ctx: CliContext, value: string | undefined): string {
  return value ? resolve(ctx.cwd, value) : join(configDir(ctx.env), "proxy.store");
}

function sizeText(n: number): string {
  return n < 1024
    ? `${n} B`
    : n < 1 << 20
      ? `${(n / 1024).toFixed(1)} KiB`
      : `${(n / (1 << 20)).toFixed(1)} MiB`;
}

/** The one line printed for a call as it completes, and listed by `proxy list`. */
export function callLine(call: ProxiedCall): string {
  return `#${call.id} ${call.method} ${call.protocol} ${call.status} ${call.durationMs.toFixed(1)}ms ↑${sizeText(call.requestBytes)} ↓${sizeText(call.responseBytes)}`;
}

async function serve(args: string[], ctx: CliContext): Promise<number> {
  const { values, help: wanted } = parseArgs(args, serveFlags, { command: "protocall proxy" });
  if (wanted) {
    ctx.stdout.write(help);
    return 0;
  }
  checkServerFlags(values);
  let upstream: URL;
  try {
    upstream = new URL(values.upstream);
  } catch {
    throw new ProtocallError(
      `--upstream "${redactSecrets(values.upstream)}" is not a URL: give http://host:port or https://host:port`,
    );
  }
  if (upstream.protocol !== "http:" && upstream.protocol !== "https:") {
    throw new ProtocallError(
      `--upstream must start with http:// or https://, got ${redactSecrets(values.upstream)}`,
    );
  }
  const ca = values.cacert ? readFlagFile(ctx, values.cacert, "--cacert") : undefined;
  const tls = await serverTls(values, ctx, "proxy");
  const file = storePath(ctx, values.store);
  const { startProxySession } = await import("../../core/proxy/proxy-session");
  const proxy = await startProxySession({
    upstream: values.upstream,
    port: values.port,
    host: values.host,
    tls,
    ca,
    insecure: values.insecure,
    schemas: values.schema,
    cwd: ctx.cwd,
    stdin: ctx.stdin,
    env: ctx.env,
    storeFile: file,
    maxStoreBytes: values["max-store"],
    onWarning: (text) => ctx.stderr.write(`protocall proxy: ${redactSecrets(text)}\n`),
    onCall: (call) => ctx.stderr.write(`${callLine(call)}\n`),
  });
  if (proxy.damaged > 0) {
    ctx.stderr.write(
      `protocall proxy: skipped ${proxy.damaged} damaged stretch(es) of ${file}; their bytes are kept in ${file}.damaged\n`,
    );
  }
  // The proxy's URL alone on stdout (for scripts); what it does on stderr, with each call's line.
  ctx.stdout.write(`${proxy.url}\n`);
  ctx.stderr.write(`proxying ${proxy.url} to ${redactSecrets(values.upstream)}, calls stored in ${file}\n`);
  await untilStopped(ctx);
  await proxy.close();
  return 0;
}

async function storedCalls(ctx: CliContext, value: string | undefined): Promise<ProxiedCall[]> {
  const file = storePath(ctx, value);
  const { existsSync } = await import("node:fs");
  if (!existsSync(file))
    throw new ProtocallError(
      `no call store at ${file}: run \`protocall proxy --upstream URL\` first, or give --store`,
    );
  const { readCalls } = await import("../../core/proxy/call-store");
  return readCalls(file);
}

async function findCall(
  ctx: CliContext,
  id: string | undefined,
  store: string | undefined,
): Promise<ProxiedCall> {
  if (id === undefined || !/^\d+$/.test(id))
    throw new ProtocallError("give the number of a call, as `protocall proxy list` shows it (#3: 3)");
  const calls = await storedCalls(ctx, store);
  const call = calls.find((c) => c.id === Number(id));
  if (!call)
    throw new ProtocallError(
      `no call ${id} in the store (it holds ${calls.length ? `calls ${calls[0].id} to ${calls[calls.length - 1].id}` : "no calls"})`,
    );
  return call;
}

async function list(args: string[], ctx: CliContext): Promise<number> {
  const { values } = parseArgs(args, storeFlag, { command: "protocall proxy list" });
  for (const call of await storedCalls(ctx, values.store)) ctx.stdout.write(`${callLine(call)}\n`);
  return 0;
}

async function show(args: string[], ctx: CliContext): Promise<number> {
  const { values, positionals } = parseArgs(args, storeFlag, {
    command: "protocall proxy show",
    positionals: 1,
  });
  const call = await findCall(ctx, positionals[0], values.store);
  const redact = (h: Record<string, string>) =>
    Object.fromEntries(Object.entries(h).map(([k, v]) => [k, redactHeaderValue(k, v)]));
  const { requestMessages: _a, responseMessages: _b, ...rest } = call;
  const shown = {
    ...rest,
    requestHeaders: redact(call.requestHeaders),
    responseHeaders: redact(call.responseHeaders),
    trailers: redact(call.trailers),
  };
  ctx.stdout.write(`${JSON.stringify(shown, null, 2)}\n`);
  return 0;
}

async function exportCommand(args: string[], ctx: CliContext): Promise<number> {
  const { values, positionals } = parseArgs(args, exportFlags, {
    command: "protocall proxy export",
    positionals: 1,
  });
  const call = await findCall(ctx, positionals[0], values.store);
  const { exportCall } = await import("../../core/proxy/export-call");
  ctx.stdout.write(exportCall(call, values.as as ExportFormat));
  return 0;
}

async function replay(args: string[], ctx: CliContext): Promise<number> {
  const { values, positionals } = parseArgs(args, replayFlags, {
    command: "protocall proxy replay",
    positionals: 1,
  });
  const call = await findCall(ctx, positionals[0], values.store);
  const { replayCall } = await import("../../core/proxy/replay-call");
  const io = callIo(ctx);
  let result: Awaited<ReturnType<typeof replayCall>>;
  try {
    result = await replayCall(call, {
      to: values.to,
      schemas: values.schema,
      cacert: values.cacert,
      insecure: values.insecure,
      io,
      product: io.product,
      signal: io.signal,
    });
  } catch (e) {
    if (!(e instanceof ProtocallError)) throw e;
    ctx.stderr.write(`protocall: ${redactSecrets(e.message)}\n`);
    return 2;
  }
  const what = `${result.replayed.status}, ${result.replayed.messages.length} message(s)`;
  if (result.differences.length === 0) {
    ctx.stdout.write(`same as call ${call.id}: ${what} from ${redactSecrets(result.url)}\n`);
    return 0;
  }
  ctx.stdout.write(
    `different from call ${call.id} (${result.differences.length}): ${what} from ${redactSecrets(result.url)}\n`,
  );
  for (const line of result.differences) ctx.stdout.write(`  ${redactSecrets(line)}\n`);
  return 1;
}

export const command: Command = {
  run: (args, ctx) =>
    runSubcommand(args, ctx, {
      command: "protocall proxy",
      usage: help,
      subcommands: { list, show, export: exportCommand, replay },
      fallback: serve,
    }),
};
