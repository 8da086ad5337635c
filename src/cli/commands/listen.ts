// `protocall listen`: the local webhook listener, plus `listen list` and `listen replay` over its store.
import { join } from "node:path";
import { errorMessage, ProtocallError } from "../../core/errors";
import { parseDuration } from "../../core/invoke/duration";
import { defaultLimits } from "../../core/webhooks/connection-guard";
import { closePostConnections } from "../../core/webhooks/http-post";
import { startListener } from "../../core/webhooks/listener";
import { replayDelivery } from "../../core/webhooks/replay";
import { configDir } from "../../core/webhooks/self-signed";
import {
  describeRecovery,
  EventStore,
  readStore,
  readStoreFile,
  type StoredDelivery,
} from "../../core/webhooks/store";
import type { CliContext, Command } from "../context";
import { checkServerFlags, serverTls } from "./server-flags";
import { parse, readText } from "./webhook";

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

Flags:
  --host HOST          address to bind (default 127.0.0.1)
  --port PORT          port (default 0: any free port)
  --tls                serve https with a self-signed certificate, generated once and kept in
                       $XDG_CONFIG_HOME/protocall (or ~/.config/protocall); its path and SHA-256
                       fingerprint are printed
  --cert FILE, --key FILE   serve https with this certificate and key (PEM)
  --store FILE         the event store (default: events.store in the config directory)
  --max-body BYTES     largest request body accepted (default 4194304)
  --max-store BYTES    size limit of the accepted deliveries; the oldest are pruned past it
                       (default 268435456)
  --header-timeout D   a new connection must send a request head within D, TLS handshake
                       included (default 10s)
  --body-timeout D     a request body must arrive within D of its head, else 408 (default 30s)
  --idle-timeout D     a connection with no request in progress is closed after D (default 30s)
  --max-connections N  most connections open at once (default 512, lowered to fit the open-file
                       limit); at the cap the longest-idle or slowest connection makes room
  --forward-to URL     relay each accepted event to your backend (Connect unary, binary) and record
                       its status, body and latency
  --forward-cacert FILE  also trust this CA when forwarding
  --forward-timeout D  give up on the backend's answer after D (default 10s)
  --forward-queue N    most events waiting to be forwarded (default 1000); past it, and on stop,
                       events are recorded as not forwarded (replay them with --to-forward)
  --prefix NAME        package prefix of the Event path (default "buf")
  --quiet              do not print deliveries
  -h, --help           show this help

Durations are written as 10s, 1m30s or 500ms (0: no timeout). On SIGINT or SIGTERM the listener stops accepting,
answers the requests being stored, gives forwards in flight 2 s, records the rest as not forwarded,
and exits; a second signal exits at once.

list: prints every stored delivery as one JSON line (id, time, status, reason, event, forward result).
replay: sends a stored delivery again, byte for byte (Connect unary, its original content type; gRPC
deliveries are re-encoded as binary): by default to the listener URL that received it, with
--to-forward to the URL it was forwarded to, with --to to any URL. Prints the status and response.
`;

function defaultStore(ctx: CliContext): string {
  return join(configDir(ctx.env), "events.store");
}

function positiveInt(value: unknown, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n <= 0)
    throw new ProtocallError(`${flag} must be a positive whole number of bytes, not "${value}"`);
  return n;
}

function positiveCount(value: unknown, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n <= 0)
    throw new ProtocallError(`${flag} must be a positive whole number, not "${value}"`);
  return n;
}

/** A timeout flag in milliseconds; 0 turns the timeout off. */
function timeout(value: unknown, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const ms = parseDuration(String(value), flag);
  if (ms < 0)
    throw new ProtocallError(`${flag} must not be negative: give a duration such as 10s, or 0 for none`);
  return ms === 0 ? Number.POSITIVE_INFINITY : ms;
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

async function serve(args: string[], ctx: CliContext): Promise<number> {
  const { values } = parse(
    args,
    {
      host: { type: "string" },
      port: { type: "string" },
      tls: { type: "boolean" },
      cert: { type: "string" },
      key: { type: "string" },
      store: { type: "string" },
      "max-body": { type: "string" },
      "max-store": { type: "string" },
      "header-timeout": { type: "string" },
      "body-timeout": { type: "string" },
      "idle-timeout": { type: "string" },
      "max-connections": { type: "string" },
      "forward-to": { type: "string" },
      "forward-cacert": { type: "string" },
      "forward-timeout": { type: "string" },
      "forward-queue": { type: "string" },
      prefix: { type: "string" },
      quiet: { type: "boolean" },
    },
    "protocall listen",
  );
  const limits = {
    headersTimeoutMs: timeout(values["header-timeout"], "--header-timeout"),
    bodyTimeoutMs: timeout(values["body-timeout"], "--body-timeout"),
    idleTimeoutMs: timeout(values["idle-timeout"], "--idle-timeout"),
    maxConnections: positiveCount(values["max-connections"], "--max-connections"),
  };
  const forwardTimeoutMs = timeout(values["forward-timeout"], "--forward-timeout");
  const forwardQueue = positiveCount(values["forward-queue"], "--forward-queue");
  const { port, prefix } = checkServerFlags(values);
  const forwardTo = values["forward-to"] as string | undefined;
  if (forwardTo !== undefined) {
    try {
      const u = new URL(forwardTo);
      if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error("scheme");
    } catch {
      throw new ProtocallError(`--forward-to "${forwardTo}" is not an http(s) URL`);
    }
  }
  const tls = await serverTls(values, ctx);
  const storePath = (values.store as string | undefined) ?? defaultStore(ctx);
  if (!values.store) {
    const { mkdirSync } = await import("node:fs");
    mkdirSync(configDir(ctx.env), { recursive: true });
  }
  const store = await EventStore.open(storePath, {
    maxBytes: positiveInt(values["max-store"], "--max-store"),
  });
  const damage = describeRecovery(store.recovery);
  if (damage) ctx.stderr.write(`protocall: warning: ${damage}\n`);
  const quiet = values.quiet === true;
  let listener: Awaited<ReturnType<typeof startListener>>;
  try {
    listener = await startListener({
      store,
      host: (values.host as string | undefined) ?? "127.0.0.1",
      port,
      tls,
      prefix,
      maxBodyBytes: positiveInt(values["max-body"], "--max-body"),
      limits,
      forwardTo,
      forwardCa: values["forward-cacert"]
        ? readText(values["forward-cacert"] as string, "--forward-cacert")
        : undefined,
      forwardTimeoutMs,
      forwardQueue,
      onDelivery: quiet ? undefined : (d) => ctx.stdout.write(`${summary(d)}\n`),
      onForward: quiet ? undefined : (id, r) => ctx.stdout.write(`${JSON.stringify({ id, forward: r })}\n`),
    });
  } catch (err) {
    await store.close();
    throw new ProtocallError(`cannot start the listener: ${errorMessage(err)}`);
  }
  ctx.stdout.write(`${listener.callbackUrl}\n`);
  ctx.stderr.write(`storing deliveries in ${storePath} (${store.count()} stored); Ctrl-C stops\n`);
  const wanted = limits.maxConnections ?? defaultLimits.maxConnections;
  if (listener.limits.maxConnections < wanted) {
    ctx.stderr.write(
      `protocall: warning: serving at most ${listener.limits.maxConnections} connections at once (not ${wanted}): the limit on open files allows no more; raise it with \`ulimit -n\`\n`,
    );
  }
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      // A second signal stops at once: what is on disk stays there.
      const now = () => process.exit(130);
      process.once("SIGINT", now);
      process.once("SIGTERM", now);
      resolve();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  await listener.close();
  await store.close();
  closePostConnections();
  return 0;
}

async function list(args: string[], ctx: CliContext): Promise<number> {
  const { values } = parse(args, { store: { type: "string" } }, "protocall listen list");
  const { deliveries, recovery } = readStore((values.store as string | undefined) ?? defaultStore(ctx));
  const damage = describeRecovery(recovery);
  if (damage) ctx.stderr.write(`protocall: warning: ${damage}\n`);
  for (const d of deliveries) ctx.stdout.write(`${summary(d)}\n`);
  return 0;
}

async function replay(args: string[], ctx: CliContext): Promise<number> {
  const { values, positionals } = parse(
    args,
    {
      store: { type: "string" },
      to: { type: "string" },
      "to-forward": { type: "boolean" },
      cacert: { type: "string" },
      insecure: { type: "boolean", short: "k" },
    },
    "protocall listen replay",
    true,
  );
  if (positionals.length !== 1 || !/^\d+$/.test(positionals[0])) {
    throw new ProtocallError("protocall listen replay needs one delivery id (see `protocall listen list`)");
  }
  if (values.to && values["to-forward"])
    throw new ProtocallError("use either --to or --to-forward, not both");
  const storePath = (values.store as string | undefined) ?? defaultStore(ctx);
  const id = Number(positionals[0]);
  const delivery = readStoreFile(storePath).find((d) => d.id === id);
  if (!delivery) throw new ProtocallError(`no delivery ${id} in ${storePath}: see \`protocall listen list\``);
  let to = values.to as string | undefined;
  if (values["to-forward"]) {
    if (!delivery.forward)
      throw new ProtocallError(`delivery ${id} was not forwarded, so there is no forward URL`);
    to = delivery.forward.url;
  }
  to ??= delivery.listenerUrl;
  try {
    const res = await replayDelivery(delivery, to, {
      ca: values.cacert ? readText(values.cacert as string, "--cacert") : undefined,
      insecure: values.insecure === true,
      timeoutMs: 30_000,
    });
    ctx.stdout.write(
      `${JSON.stringify({ id, to, status: res.status, latencyMs: Math.round(res.latencyMs * 10) / 10, response: res.body.toString("utf8") }, null, 2)}\n`,
    );
    return res.status === 200 ? 0 : 1;
  } catch (err) {
    ctx.stderr.write(`protocall: cannot replay delivery ${id} to ${to}: ${errorMessage(err)}\n`);
    return 14 * 8;
  }
}

export const command: Command = {
  async run(args, ctx) {
    if (args.includes("-h") || args.includes("--help")) {
      ctx.stdout.write(help);
      return 0;
    }
    if (args[0] === "list") return list(args.slice(1), ctx);
    if (args[0] === "replay") return replay(args.slice(1), ctx);
    return serve(args, ctx);
  },
};
