// `protocall registry serve|push|deliveries`: a local registry emulator for trying webhooks end to end.
import { toJson } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { errorMessage, ProtocallError } from "../../core/errors";
import { defaultRegistryConfig, loadRegistryConfig } from "../../core/webhooks/emulator/config";
import { startRegistryEmulator } from "../../core/webhooks/emulator/server";
import { resolveToken } from "../../core/webhooks/token";
import {
  ListDeliveriesResponseSchema,
  PushResponseSchema,
  RegistryService,
} from "../../gen/protocall/registry/v1/registry_pb";
import type { CliContext, Command } from "../context";
import { checkServerFlags, serverTls } from "./server-flags";
import { parse, readText, remoteBaseUrl } from "./webhook";

const serveHelp = `Usage: protocall registry serve [flags]

Runs a registry emulator on one port (HTTP/1.1 and HTTP/2; Connect binary and JSON, gRPC, gRPC-Web):
  - the module API the buf CLI uses, so \`buf push\`, \`buf build|export REMOTE/owner/module[:ref]\`,
    \`buf curl --schema REMOTE/owner/module\` and \`buf dep update\` work against it:
    buf.registry.module.v1 ModuleService (GetModules, CreateModules), UploadService, CommitService
    (GetCommits), GraphService (GetGraph), DownloadService, and buf.registry.owner.v1.OwnerService;
  - the registry's WebhookService with its rules;
  - protocall.registry.v1.RegistryService (Push without content, ListDeliveries).
Other services answer unimplemented. Prints its base URL (the --remote of the other commands) on the
first line. For buf, serve https (--cert/--key, or --tls) and name modules localhost:PORT/owner/module
(buf.yaml v2); buf trusts the certificate through SSL_CERT_FILE and sends BUF_TOKEN (or ~/.netrc).

Every call needs "Authorization: Bearer <token>" of a configured user, checked before the request body
is read (unauthenticated otherwise); bodies over the limit are refused with resource_exhausted (413).
A repository of the webhook API is a module of the module API.

Module rules: reading a private module needs a role on it (public: any signed-in user); pushing needs
the member or Admin role; \`buf push --create\` creates the module with the caller as Admin (under the
caller's own name, or an organization the caller is an Admin or member of); a module's default label
is "main" unless created otherwise; a push moves the labels it names (--label), else the default label;
a push whose content equals an existing commit of the module returns that commit; dependencies between
the modules of one push are worked out from their imports; digests are b5, as buf computes them;
commit ids are dashless UUIDs (a dashed id is accepted in a reference). A reference resolves to a
commit of the module first, then to a label; an empty one to the default label (failed_precondition
when it has no commit).

Webhook rules: only Admins of a repository may create, list or delete its webhook; one webhook per
repository and event; the callback URL must use https, end with
/buf.alpha.webhook.v1alpha1.EventService/Event and have no query or fragment; delete returns {};
ListWebhooks returns --page-size webhooks per page with next_page_token. ListWebhooks with owner_name
alone (an emulator extension) lists the owner's webhooks on every repository the caller administers.
Error codes: unauthenticated, permission_denied, already_exists, invalid_argument, not_found, and
failed_precondition ("webhooks are disabled on this instance") when webhooks are disabled.

Pushes: a push through the module API that makes a new commit, and \`protocall registry push\`
(members and Admins; a commit without content, for quick tests), queue a
WEBHOOK_EVENT_REPOSITORY_PUSH event for the repository's webhook. A module push maps onto the event
as: commit id and name = the commit id, digest and b5_digest = "b5:<hex>", manifest_digest =
"shake256:<hex>" of the module files' manifest, author = the pusher, tags = the labels the push moved,
branch = the default label if the push moved it, commit_sequence_id = the commit's position in the
module, create time = the commit's. A push of unchanged content fires no event.
Delivery, as the registry does it: each event is POSTed to the callback URL with the Connect protocol
(unary, Content-Type: application/proto, binary EventRequest); TLS is verified against the system
roots plus --trust-ca. Choices the registry leaves open, made here:
  - batching: the first batch is taken --batch-interval after an event arrives in an empty queue, then
    one batch of up to --batch-size events per interval while events remain;
  - ordering: events of one repository are delivered one at a time, in push order;
  - no retries: a failed attempt (network error or a status other than 200) is recorded and dropped;
  - an event keeps the callback URL it was queued with: deleting a webhook does not cancel pending
    events, they are still delivered.
Every attempt (status, latency, response, error) is kept for ListDeliveries
(\`protocall registry deliveries\`) and printed with --verbose.

State: with --state, modules, commits with their content, labels, webhooks and content-less commits
survive a restart. Every change is on disk (appended and synced) before the call that made it is
answered; one emulator per state file.

Flags:
  --config FILE          users, repositories (modules) with roles and visibility, organizations (JSON;
                         see examples/registry/config.json). Default: alice (token alice-token) Admin and
                         bob (bob-token) member of the private acme/petapis
  --state FILE           persist the state here; in memory when absent
  --host HOST            address to bind (default 127.0.0.1)
  --port PORT            port (default 0: any free port)
  --tls                  serve https with a self-signed certificate, generated once and kept in
                         $XDG_CONFIG_HOME/protocall (or ~/.config/protocall); path and SHA-256
                         fingerprint are printed (http on loopback by default)
  --cert FILE, --key FILE  serve https with this certificate and key (PEM)
  --batch-size N         events per delivery batch (default 20)
  --batch-interval DUR   time between batches: 5s, 500ms, or milliseconds (default 5s)
  --trust-ca FILE        trust this CA (PEM) for callback URLs, in addition to the system roots
                         (without it, a listener with a self-signed certificate is refused)
  --page-size N          ListWebhooks page size (default 10)
  --max-upload SIZE      largest push (Upload request body): bytes, or with KiB, MiB or GiB
                         (default 256MiB); other calls take at most 4 MiB
  --webhooks-disabled    refuse every WebhookService call, as an instance with webhooks disabled
  --prefix NAME          package prefix of the webhook services (default "buf")
  --verbose              print each push, webhook change and delivery attempt
  -h, --help             show this help

Example, with buf as the client:
  protocall registry serve --cert server.pem --key server-key.pem --port 8443 --state registry.state
  SSL_CERT_FILE=ca.pem BUF_TOKEN=alice-token buf push --create --create-visibility private
    (buf.yaml: modules: [{path: proto, name: localhost:8443/acme/petapis}])
`;

const pushHelp = `Usage: protocall registry push --remote URL --owner OWNER --repository REPO [--author NAME] [--tag TAG]...

Records a new commit in a repository of a registry emulator and queues a push event for its webhook.
Needs the member or Admin role; the token comes from PROTOCALL_TOKEN, BUF_TOKEN or ~/.netrc.
Prints the PushResponse (the commit) as JSON.

Flags:
  --remote URL        the emulator (host, or a full URL such as http://127.0.0.1:8080)
  --owner NAME, --repository NAME
  --author NAME       the commit's author (default: the caller)
  --tag TAG           a tag on the commit; repeat for more
  --cacert FILE       also trust this CA (PEM) for the emulator's TLS
  -h, --help          show this help
`;

const deliveriesHelp = `Usage: protocall registry deliveries --remote URL [--owner OWNER --repository REPO]

Lists the emulator's delivery attempts (oldest first) for the repositories the caller belongs to.

Flags:
  --remote URL        the emulator (host, or a full URL)
  --owner NAME, --repository NAME   only this repository
  --cacert FILE       also trust this CA (PEM) for the emulator's TLS
  -h, --help          show this help
`;

const usage = `Usage: protocall registry <serve|push|deliveries> [flags]

  serve        run a registry emulator (the module API buf pushes to, WebhookService, delivery)
  push         record a commit in an emulator's repository, emitting a push event
  deliveries   list an emulator's delivery attempts

Run \`protocall registry <subcommand> --help\` for its flags.
`;

/** Parses 5s, 500ms, 2m or a plain number of milliseconds. */
export function parseDuration(text: string, flag: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(text.trim());
  if (!m) throw new ProtocallError(`${flag} "${text}" is not a duration: write 5s, 500ms or 2m`);
  const n = Number(m[1]) * (m[2] === "s" ? 1000 : m[2] === "m" ? 60_000 : 1);
  if (n <= 0) throw new ProtocallError(`${flag} must be more than zero`);
  return n;
}

/** Parses a byte size: 1048576, 64KiB, 256MiB, 1GiB (KB, MB, GB mean the same powers of 1024). */
export function parseSize(text: string, flag: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*(b|kib|kb|k|mib|mb|m|gib|gb|g)?$/i.exec(text.trim());
  if (!m) throw new ProtocallError(`${flag} "${text}" is not a size: write bytes, or 64KiB, 256MiB, 1GiB`);
  const unit = (m[2] ?? "b").toLowerCase()[0];
  const n = Math.floor(
    Number(m[1]) * (unit === "k" ? 1024 : unit === "m" ? 1024 ** 2 : unit === "g" ? 1024 ** 3 : 1),
  );
  if (n <= 0) throw new ProtocallError(`${flag} must be more than zero`);
  return n;
}

function positive(value: unknown, flag: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n <= 0)
    throw new ProtocallError(`${flag} must be a positive whole number, not "${value}"`);
  return n;
}

async function serve(args: string[], ctx: CliContext): Promise<number> {
  const { values } = parse(
    args,
    {
      config: { type: "string" },
      state: { type: "string" },
      host: { type: "string" },
      port: { type: "string" },
      tls: { type: "boolean" },
      cert: { type: "string" },
      key: { type: "string" },
      "batch-size": { type: "string" },
      "batch-interval": { type: "string" },
      "trust-ca": { type: "string" },
      "page-size": { type: "string" },
      "max-upload": { type: "string" },
      "webhooks-disabled": { type: "boolean" },
      prefix: { type: "string" },
      verbose: { type: "boolean" },
    },
    "protocall registry serve",
  );
  const { port, prefix } = checkServerFlags(values);
  const config = values.config ? loadRegistryConfig(values.config as string) : defaultRegistryConfig;
  const verbose = values.verbose === true;
  const tls = await serverTls(values, ctx, "registry");
  let emulator: Awaited<ReturnType<typeof startRegistryEmulator>>;
  try {
    emulator = await startRegistryEmulator({
      config,
      statePath: values.state as string | undefined,
      host: (values.host as string | undefined) ?? "127.0.0.1",
      port,
      tls,
      prefix,
      batchSize: positive(values["batch-size"], "--batch-size", 20),
      batchIntervalMs: values["batch-interval"]
        ? parseDuration(values["batch-interval"] as string, "--batch-interval")
        : 5000,
      trustCa: values["trust-ca"] ? readText(values["trust-ca"] as string, "--trust-ca") : undefined,
      pageSize: positive(values["page-size"], "--page-size", 10),
      maxUploadBytes: values["max-upload"]
        ? parseSize(values["max-upload"] as string, "--max-upload")
        : undefined,
      webhooksEnabled: values["webhooks-disabled"] ? false : undefined,
      log: verbose ? (line) => ctx.stdout.write(`${line}\n`) : undefined,
    });
  } catch (err) {
    if (err instanceof ProtocallError) throw err;
    throw new ProtocallError(`cannot start the registry emulator: ${errorMessage(err)}`);
  }
  ctx.stdout.write(`${emulator.url}\n`);
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  await emulator.close();
  return 0;
}

function clientFor(values: Record<string, unknown>, ctx: CliContext, command: string) {
  const remote = values.remote as string | undefined;
  if (!remote) throw new ProtocallError(`${command} needs --remote; see \`${command} --help\``);
  const baseUrl = remoteBaseUrl(remote);
  const host = new URL(baseUrl).host;
  const token = resolveToken(ctx.env, host);
  if (!token) {
    throw new ProtocallError(
      `no API token for ${host}: set PROTOCALL_TOKEN (or BUF_TOKEN), or add it to ~/.netrc`,
    );
  }
  const transport = createConnectTransport({
    baseUrl,
    httpVersion: "1.1",
    nodeOptions: values.cacert ? { ca: readText(values.cacert as string, "--cacert") } : undefined,
  });
  return {
    baseUrl,
    client: createClient(RegistryService, transport),
    headers: { authorization: `Bearer ${token.token}` },
  };
}

async function rpc<T>(baseUrl: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    const e = ConnectError.from(err);
    if (e.code === Code.Unauthenticated) {
      throw new ConnectError(`${e.rawMessage}: check PROTOCALL_TOKEN, BUF_TOKEN or ~/.netrc`, e.code);
    }
    if (e.code === Code.Unavailable) {
      throw new ConnectError(
        `cannot reach the registry emulator at ${baseUrl}: ${e.rawMessage}; check --remote and that \`protocall registry serve\` runs there`,
        e.code,
      );
    }
    throw e;
  }
}

async function push(args: string[], ctx: CliContext): Promise<number> {
  const { values } = parse(
    args,
    {
      remote: { type: "string" },
      owner: { type: "string" },
      repository: { type: "string" },
      author: { type: "string" },
      tag: { type: "string", multiple: true },
      cacert: { type: "string" },
    },
    "protocall registry push",
  );
  if (!values.owner || !values.repository) {
    throw new ProtocallError("protocall registry push needs --owner and --repository");
  }
  const { baseUrl, client, headers } = clientFor(values, ctx, "protocall registry push");
  const res = await rpc(baseUrl, () =>
    client.push(
      {
        ownerName: values.owner as string,
        repositoryName: values.repository as string,
        author: (values.author as string | undefined) ?? "",
        tags: (values.tag as string[] | undefined) ?? [],
      },
      { headers, timeoutMs: 30_000 },
    ),
  );
  ctx.stdout.write(`${JSON.stringify(toJson(PushResponseSchema, res), null, 2)}\n`);
  return 0;
}

async function deliveries(args: string[], ctx: CliContext): Promise<number> {
  const { values } = parse(
    args,
    {
      remote: { type: "string" },
      owner: { type: "string" },
      repository: { type: "string" },
      cacert: { type: "string" },
    },
    "protocall registry deliveries",
  );
  const { baseUrl, client, headers } = clientFor(values, ctx, "protocall registry deliveries");
  const res = await rpc(baseUrl, () =>
    client.listDeliveries(
      {
        ownerName: (values.owner as string | undefined) ?? "",
        repositoryName: (values.repository as string | undefined) ?? "",
      },
      { headers, timeoutMs: 30_000 },
    ),
  );
  const json = toJson(ListDeliveriesResponseSchema, res);
  ctx.stdout.write(`${JSON.stringify(res.deliveries.length ? json : { deliveries: [] }, null, 2)}\n`);
  return 0;
}

function help(ctx: CliContext, text: string): number {
  ctx.stdout.write(text);
  return 0;
}

export const command: Command = {
  async run(args, ctx) {
    const [sub, ...rest] = args;
    const helpWanted = rest.includes("-h") || rest.includes("--help");
    switch (sub) {
      case "serve":
        if (helpWanted) return help(ctx, serveHelp);
        return serve(rest, ctx);
      case "push":
        if (helpWanted) return help(ctx, pushHelp);
        return push(rest, ctx);
      case "deliveries":
        if (helpWanted) return help(ctx, deliveriesHelp);
        return deliveries(rest, ctx);
      case undefined:
        ctx.stderr.write(usage);
        return 1;
      case "-h":
      case "--help":
      case "help":
        ctx.stdout.write(usage);
        return 0;
      default:
        throw new ProtocallError(
          `unknown subcommand "${sub}" of protocall registry: use serve, push or deliveries`,
        );
    }
  },
};
