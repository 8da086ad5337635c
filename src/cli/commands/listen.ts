// `protocall listen`: the local webhook listener, plus `listen list` and `listen replay` over its store.
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { errorMessage, ProtocallError } from "../../core/errors";
import { formatDuration } from "../../core/invoke/duration";
import { shownProxy } from "../../core/invoke/proxy-choice";
import { defaultLimits } from "../../core/serve/connection-guard";
import { configDir } from "../../core/serve/self-signed";
import { defaultForwarding } from "../../core/webhooks/forwarder";
import { closePostConnections } from "../../core/webhooks/http-post";
import { startListener } from "../../core/webhooks/listener";
import { replayDelivery } from "../../core/webhooks/replay";
import { describeRecovery, EventStore, readStore, type StoredDelivery } from "../../core/webhooks/store";
import { defineFlags, flagsHelp, parseArgs, runSubcommand } from "../args";
import type { CliContext, Command } from "../context";
import { readFlagFile, untilStopped } from "../io";
import { checkProxyFlag, proxyFlag, proxyTo } from "./proxy-flag";
import { checkServerFlags, serverFlags, serverTls } from "./server-flags";
import { certificateAdvice, trustFor } from "./trust";

const storeFlag = defineFlags({
  store: {
    kind: "string",
    value: "FILE",
    defaultText: "events.store in the config directory",
    help: "the event store",
  },
});

const serveFlags = defineFlags({
  ...serverFlags,
  ...storeFlag,
  "max-body": {
    kind: "size",
    defaultText: "4MiB",
    help: "largest request body accepted (bytes, or with KiB, MiB or GiB)",
  },
  "max-store": {
    kind: "size",
    defaultText: "256MiB",
    help: "size limit of the accepted deliveries; the oldest are pruned past it",
  },
  "header-timeout": {
    kind: "duration",
    min: 0,
    defaultText: formatDuration(defaultLimits.headersTimeoutMs),
    help: "a new connection must send a request head within this time, TLS handshake included; 0: no limit",
  },
  "body-timeout": {
    kind: "duration",
    min: 0,
    defaultText: formatDuration(defaultLimits.bodyTimeoutMs),
    help: "a request body must arrive within this time of its head, else 408; 0: no limit",
  },
  "idle-timeout": {
    kind: "duration",
    min: 0,
    defaultText: formatDuration(defaultLimits.idleTimeoutMs),
    help: "a connection with no request in progress is closed after this time; 0: never",
  },
  "max-connections": {
    kind: "int",
    value: "N",
    min: 1,
    defaultText: `${defaultLimits.maxConnections}, lowered to fit the open-file limit`,
    help: "most connections open at once; at the cap the longest-idle or slowest connection makes room",
  },
  "forward-to": {
    kind: "string",
    value: "URL",
    help: "relay each accepted event to your backend (Connect unary, binary) and record its status, body and latency",
  },
  "forward-cacert": { kind: "string", value: "FILE", help: "also trust this CA when forwarding" },
  "forward-timeout": {
    kind: "duration",
    min: 0,
    defaultText: formatDuration(defaultForwarding.timeoutMs),
    help: "give up on the backend's answer after this time; 0: never",
  },
  "forward-queue": {
    kind: "int",
    value: "N",
    min: 1,
    defaultText: String(defaultForwarding.maxQueue),
    help: "most events waiting to be forwarded; past it, and on stop, events are recorded as not forwarded (replay them with --to-forward)",
  },
  quiet: { kind: "bool", help: "do not print deliveries" },
  ...proxyFlag,
});

const replayFlags = defineFlags({
  ...storeFlag,
  to: { kind: "string", value: "URL", help: "send it to this URL" },
  "to-forward": { kind: "bool", help: "send it to the URL it was forwarded to" },
  cacert: {
    kind: "string",
    value: "FILE",
    help: "also trust this CA certificate (PEM), e.g. the certificate of a listener started with --cert/--key",
  },
  insecure: { kind: "bool", short: "k", help: "do not verify the target's TLS certificate" },
  ...proxyFlag,
});

const help = `Usage: protocall listen [flags]
       protocall listen list [--store FILE]
       protocall listen replay ID [--to URL | --to-forward] [--store FILE] [--cacert FILE] [-k]

Runs a webhook listener: it serves POST /buf.alpha.webhook.v1alpha1.EventService/Event with a Connect
handler (Connect binary and JSON, gRPC, gRPC-Web; HTTP/1.1 and HTTP/2), stores every delivery in an
append-only file, and answers the empty EventResponse only once the event is on disk (fsync). Bodies
compressed with gzip or br are accepted up to --max-body once decompressed. Bad deliveries (wrong path,
method or content type, undecodable, oversized or too slow bodies) get a 4xx with a Connect error JSON
and are recorded as rejected, apart from accepted ones: the newest 1000, with the first 1 KiB of each
body, never counted against --max-store. A store damaged on disk is read past the damage: what was
skipped is named on stderr. The first line printed is the callback URL to register
(\`protocall webhook create --callback-url URL\`); then each delivery is printed as one JSON line.
The registry requires an https callback URL: use --tls (or --cert/--key) for a registry to call it.
On Ctrl-C (SIGINT) or SIGTERM the listener stops accepting, answers the requests being stored, gives
forwards in flight 2 s, records the rest as not forwarded, and exits; a second signal exits at once.

Flags:
${flagsHelp(serveFlags)}
list: prints every stored delivery as one JSON line (id, time, status, reason, event, forward result);
"no deliveries yet" on stderr when there is none.

Flags of list:
${flagsHelp(storeFlag)}
replay: sends a stored delivery again, byte for byte (Connect unary, its original content type; gRPC
deliveries are re-encoded as binary): by default to the listener URL that received it, with
--to-forward to the URL it was forwarded to, with --to to any URL. Prints the status and response.
A listener started with --tls on this machine is trusted without flags.

Flags of replay:
${flagsHelp(replayFlags)}`;

function storePath(ctx: CliContext, store: string | undefined): string {
  return store === undefined ? join(configDir(ctx.env), "events.store") : resolve(ctx.cwd, store);
}

function summary(d: StoredDelivery): string {
  return JSON.stringify({
    id: d.id,
    receivedAt: d.receivedAt,
    status: d.status,
    httpStatus: d.httpStatus,
    remoteAddress: d.remoteAddress,
    contentType: d.headers["content-type"] ?? "",
    ...(d.reason ? { reason: d.reason } : {}),
    ...(d.event !== undefined ? { event: d.event } : {}),
    ...(d.forward ? { forward: d.forward } : {}),
  });
}

/** The parsed flags of a subcommand; its help is printed (and undefined returned) when asked. */
function flagsOf<S extends typeof serveFlags | typeof storeFlag | typeof replayFlags>(
  args: string[],
  spec: S,
  command: string,
  ctx: CliContext,
  positionals = 0,
) {
  const parsed = parseArgs(args, spec, { command, positionals });
  if (!parsed.help) return parsed;
  ctx.stdout.write(help);
  return undefined;
}

async function serve(args: string[], ctx: CliContext): Promise<number> {
  const parsed = flagsOf(args, serveFlags, "protocall listen", ctx);
  if (!parsed) return 0;
  const { values } = parsed;
  checkServerFlags(values);
  // Handlers first: a Ctrl-C or SIGTERM while the server starts still stops it cleanly.
  const stopped = untilStopped(ctx);
  const forwardTo = values["forward-to"];
  if (forwardTo !== undefined) {
    try {
      const u = new URL(forwardTo);
      if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error("scheme");
    } catch {
      throw new ProtocallError(
        `invalid value "${forwardTo}" for --forward-to: it must be an http(s) URL, such as http://127.0.0.1:9000/buf.alpha.webhook.v1alpha1.EventService/Event`,
      );
    }
  }
  if (values.proxy !== undefined && forwardTo === undefined) {
    throw new ProtocallError("--proxy applies to forwards: give --forward-to URL too");
  }
  checkProxyFlag(values.proxy);
  // Forwards go through --proxy or the environment's proxy (HTTPS_PROXY / HTTP_PROXY, NO_PROXY), as calls do.
  const forwardProxy = forwardTo ? proxyTo(forwardTo, values.proxy, ctx) : undefined;
  const tls = await serverTls(values, ctx);
  const path = storePath(ctx, values.store);
  if (values.store === undefined) {
    const { mkdirSync } = await import("node:fs");
    mkdirSync(configDir(ctx.env), { recursive: true });
  }
  const forwardCa = values["forward-cacert"]
    ? readFlagFile(ctx, values["forward-cacert"], "--forward-cacert")
    : undefined;
  const store = await EventStore.open(path, { maxBytes: values["max-store"] });
  const damage = describeRecovery(store.recovery);
  if (damage) ctx.stderr.write(`protocall: warning: ${damage}\n`);
  /** A timeout flag in milliseconds; 0 turns the timeout off. */
  const timeout = (ms: number | undefined) => (ms === 0 ? Number.POSITIVE_INFINITY : ms);
  const limits = {
    headersTimeoutMs: timeout(values["header-timeout"]),
    bodyTimeoutMs: timeout(values["body-timeout"]),
    idleTimeoutMs: timeout(values["idle-timeout"]),
    maxConnections: values["max-connections"],
  };
  const quiet = values.quiet;
  let listener: Awaited<ReturnType<typeof startListener>>;
  try {
    listener = await startListener({
      store,
      host: values.host,
      port: values.port,
      tls,
      prefix: values.prefix,
      maxBodyBytes: values["max-body"],
      limits,
      forwardTo,
      forwardCa,
      forwardProxy,
      forwardTimeoutMs: timeout(values["forward-timeout"]),
      forwardQueue: values["forward-queue"],
      onDelivery: quiet ? undefined : (d) => ctx.stdout.write(`${summary(d)}\n`),
      onForward: quiet ? undefined : (id, r) => ctx.stdout.write(`${JSON.stringify({ id, forward: r })}\n`),
    });
  } catch (err) {
    await store.close();
    throw new ProtocallError(`cannot start the listener: ${errorMessage(err)}`);
  }
  ctx.stdout.write(`${listener.callbackUrl}\n`);
  ctx.stderr.write(`storing deliveries in ${path} (${store.count()} stored); Ctrl-C stops\n`);
  if (forwardProxy) {
    ctx.stderr.write(
      `forwarding through the proxy ${shownProxy(forwardProxy.url)} (from ${forwardProxy.from})\n`,
    );
  }
  const wanted = limits.maxConnections ?? defaultLimits.maxConnections;
  if (listener.limits.maxConnections < wanted) {
    ctx.stderr.write(
      `protocall: warning: serving at most ${listener.limits.maxConnections} connections at once (not ${wanted}): the limit on open files allows no more; raise it with \`ulimit -n\`\n`,
    );
  }
  await stopped;
  await listener.close();
  await store.close();
  closePostConnections();
  return 0;
}

/** The deliveries of a store; none (with a note on stderr) when no listener has stored any yet. */
function deliveriesIn(ctx: CliContext, path: string): StoredDelivery[] {
  if (!existsSync(path)) {
    ctx.stderr.write(`no deliveries yet: ${path} does not exist until \`protocall listen\` stores one\n`);
    return [];
  }
  const { deliveries, recovery } = readStore(path);
  const damage = describeRecovery(recovery);
  if (damage) ctx.stderr.write(`protocall: warning: ${damage}\n`);
  if (deliveries.length === 0) ctx.stderr.write(`no deliveries yet in ${path}\n`);
  return deliveries;
}

async function list(args: string[], ctx: CliContext): Promise<number> {
  const parsed = flagsOf(args, storeFlag, "protocall listen list", ctx);
  if (!parsed) return 0;
  for (const d of deliveriesIn(ctx, storePath(ctx, parsed.values.store))) ctx.stdout.write(`${summary(d)}\n`);
  return 0;
}

async function replay(args: string[], ctx: CliContext): Promise<number> {
  const parsed = flagsOf(args, replayFlags, "protocall listen replay", ctx, 1);
  if (!parsed) return 0;
  const { values, positionals } = parsed;
  if (positionals.length !== 1 || !/^\d+$/.test(positionals[0])) {
    throw new ProtocallError(
      `protocall listen replay needs one delivery id${positionals.length ? `, not "${positionals[0]}"` : ""}: write \`protocall listen replay ID\` (see \`protocall listen list\` for the ids)`,
    );
  }
  if (values.to && values["to-forward"])
    throw new ProtocallError("use either --to or --to-forward, not both");
  checkProxyFlag(values.proxy);
  const path = storePath(ctx, values.store);
  const id = Number(positionals[0]);
  const delivery = deliveriesIn(ctx, path).find((d) => d.id === id);
  if (!delivery) throw new ProtocallError(`no delivery ${id} in ${path}: see \`protocall listen list\``);
  let to = values.to;
  if (values["to-forward"]) {
    if (!delivery.forward)
      throw new ProtocallError(`delivery ${id} was not forwarded, so there is no forward URL`);
    to = delivery.forward.url;
  }
  to ??= delivery.listenerUrl;
  try {
    const res = await replayDelivery(delivery, to, {
      ...trustFor(ctx, values),
      timeoutMs: 30_000,
      proxy: proxyTo(to, values.proxy, ctx),
    });
    ctx.stdout.write(
      `${JSON.stringify({ id, to, status: res.status, latencyMs: Math.round(res.latencyMs * 10) / 10, response: res.body.toString("utf8") }, null, 2)}\n`,
    );
    return res.status === 200 ? 0 : 1;
  } catch (err) {
    const message = errorMessage(err);
    ctx.stderr.write(
      `protocall: cannot replay delivery ${id} to ${to}: ${message}${certificateAdvice(message)}\n`,
    );
    return 14 * 8;
  }
}

export const command: Command = {
  run: (args, ctx) =>
    runSubcommand(args, ctx, {
      command: "protocall listen",
      usage: help,
      subcommands: { list, replay },
      fallback: serve,
    }),
};
