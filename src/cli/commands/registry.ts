// `protocall registry serve|push|deliveries`: a local registry emulator for trying webhooks end to end.

import { toJson } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { errorMessage, ProtocallError } from "../../core/errors";
import { registryTransport } from "../../core/registry/transport";
import { registryTrust } from "../../core/registry/trust";
import { defaultRegistryConfig, loadRegistryConfig } from "../../core/registry-emulator/config";
import { startRegistryEmulator } from "../../core/registry-emulator/server";
import {
  ListDeliveriesResponseSchema,
  PushResponseSchema,
  RegistryService,
} from "../../gen/protocall/registry/v1/registry_pb";
import { defineFlags, flagsHelp, parseArgs, runSubcommand } from "../args";
import type { CliContext, Command } from "../context";
import { untilStopped } from "../io";
import { openRemote, remoteFlags } from "./registry-remote";
import { checkServerFlags, serverFlags, serverTls } from "./server-flags";
import { trustOptions } from "./trust";

const serveFlags = defineFlags({
  config: {
    kind: "string",
    value: "FILE",
    help: "users, repositories (modules) with roles and visibility, organizations (JSON; see examples/registry/config.json); without it, alice (token alice-token) is an Admin and bob (bob-token) a member of the private acme/petapis",
  },
  state: {
    kind: "string",
    value: "FILE",
    help: "persist the state here; in memory when absent",
  },
  ...serverFlags,
  "batch-size": { kind: "int", value: "N", min: 1, default: 20, help: "events per delivery batch" },
  "batch-interval": {
    kind: "duration",
    value: "DURATION",
    min: 1,
    default: 5000,
    help: "time between batches, such as 5s, 500ms or 1m30s",
  },
  "trust-ca": {
    kind: "string",
    value: "FILE",
    help: "trust this CA (PEM) for callback URLs, in addition to the system roots and the certificate of `protocall listen --tls` on this machine (without it, a listener with any other self-signed certificate is refused)",
  },
  "page-size": { kind: "int", value: "N", min: 1, default: 10, help: "ListWebhooks page size" },
  "max-upload": {
    kind: "size",
    defaultText: "32MiB",
    help: "largest push (Upload request body, held in memory several times over while it is stored); other calls take at most 4 MiB",
  },
  "webhooks-disabled": {
    kind: "bool",
    help: "refuse every WebhookService call, as an instance with webhooks disabled",
  },
  verbose: { kind: "bool", help: "print each push, webhook change and delivery attempt" },
});

/** --remote names the emulator here: its URL as `registry serve` prints it. */
const emulatorFlags = defineFlags({
  ...remoteFlags,
  remote: {
    ...remoteFlags.remote,
    value: "URL",
    help: "the emulator's URL, as `protocall registry serve` prints it (a host alone means https://HOST); an emulator started with --tls on this machine is trusted",
  },
});

const pushFlags = defineFlags({
  ...emulatorFlags,
  owner: { kind: "string", value: "NAME", required: true, help: "the repository's owner" },
  repository: { kind: "string", value: "NAME", required: true, help: "the repository" },
  author: { kind: "string", value: "NAME", help: "the commit's author (default: the caller)" },
  tag: { kind: "strings", value: "TAG", help: "a tag on the commit" },
});

const deliveriesFlags = defineFlags({
  ...emulatorFlags,
  owner: { kind: "string", value: "NAME", help: "only this owner's repository (with --repository)" },
  repository: { kind: "string", value: "NAME", help: "only this repository (with --owner)" },
});

const serveHelp = `Usage: protocall registry serve [flags]

Runs a registry emulator on one port (HTTP/1.1 and HTTP/2; Connect binary and JSON, gRPC, gRPC-Web):
  - the module API the buf CLI uses, so \`buf push\`, \`buf build|export REMOTE/owner/module[:ref]\`,
    \`buf curl --schema REMOTE/owner/module\`, \`buf dep update\` and \`buf registry module commit|label
    list\` work against it:
    buf.registry.module.v1 ModuleService (GetModules, CreateModules), UploadService, CommitService
    (GetCommits, ListCommits), LabelService (ListLabels, ListLabelHistory), ResourceService
    (GetResources), GraphService (GetGraph), DownloadService, and buf.registry.owner.v1.OwnerService;
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
roots plus --trust-ca (and the certificate of \`protocall listen --tls\` on this machine).
Choices the registry leaves open, made here:
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
${flagsHelp(serveFlags)}
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
${flagsHelp(pushFlags)}`;

const deliveriesHelp = `Usage: protocall registry deliveries --remote URL [--owner OWNER --repository REPO]

Lists the emulator's delivery attempts (oldest first) for the repositories the caller belongs to.

Flags:
${flagsHelp(deliveriesFlags)}`;

const usage = `Usage: protocall registry <serve|push|deliveries> [flags]

  serve        run a registry emulator (the module API buf pushes to, WebhookService, delivery)
  push         record a commit in an emulator's repository, emitting a push event
  deliveries   list an emulator's delivery attempts

Run \`protocall registry <subcommand> --help\` for its flags.
`;

/** The parsed flags of a subcommand; its help is printed (and undefined returned) when asked. */
function flagsOf<S extends typeof serveFlags | typeof pushFlags | typeof deliveriesFlags>(
  args: string[],
  spec: S,
  sub: string,
  text: string,
  ctx: CliContext,
) {
  const parsed = parseArgs(args, spec, { command: `protocall registry ${sub}` });
  if (!parsed.help) return parsed.values;
  ctx.stdout.write(text);
  return undefined;
}

async function serve(args: string[], ctx: CliContext): Promise<number> {
  const values = flagsOf(args, serveFlags, "serve", serveHelp, ctx);
  if (!values) return 0;
  checkServerFlags(values);
  // Handlers first: a Ctrl-C or SIGTERM while the server starts still stops it cleanly.
  const stopped = untilStopped(ctx);
  const config = values.config ? loadRegistryConfig(values.config) : defaultRegistryConfig;
  const verbose = values.verbose;
  const tls = await serverTls(values, ctx, "registry");
  let emulator: Awaited<ReturnType<typeof startRegistryEmulator>>;
  try {
    emulator = await startRegistryEmulator({
      config,
      statePath: values.state,
      host: values.host,
      port: values.port,
      tls,
      prefix: values.prefix,
      batchSize: values["batch-size"],
      batchIntervalMs: values["batch-interval"],
      trustCa: callbackTrust(ctx, values["trust-ca"]),
      pageSize: values["page-size"],
      maxUploadBytes: values["max-upload"],
      webhooksEnabled: values["webhooks-disabled"] ? false : undefined,
      log: verbose ? (line) => ctx.stdout.write(`${line}\n`) : undefined,
    });
  } catch (err) {
    if (err instanceof ProtocallError) throw err;
    throw new ProtocallError(`cannot start the registry emulator: ${errorMessage(err)}`);
  }
  ctx.stdout.write(`${emulator.url}\n`);
  await stopped;
  await emulator.close();
  return 0;
}

/**
 * The certificates trusted for callback URLs: the one trust rule with --trust-ca, and the certificate
 * `protocall listen --tls` generated on this machine, so a local https listener needs no flag.
 */
function callbackTrust(ctx: CliContext, trustCa: string | undefined): string | undefined {
  return registryTrust(trustOptions(ctx, trustCa, { flag: "--trust-ca", servers: ["listener"] }))?.join("\n");
}

function clientFor(values: { remote: string; cacert?: string; proxy?: string }, ctx: CliContext) {
  const { baseUrl, access } = openRemote(values, ctx);
  return {
    baseUrl,
    client: createClient(RegistryService, registryTransport(access, { baseUrl, binary: false })),
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
  const values = flagsOf(args, pushFlags, "push", pushHelp, ctx);
  if (!values) return 0;
  const { baseUrl, client } = clientFor(values, ctx);
  const res = await rpc(baseUrl, () =>
    client.push(
      {
        ownerName: values.owner,
        repositoryName: values.repository,
        author: values.author ?? "",
        tags: values.tag,
      },
      { timeoutMs: 30_000 },
    ),
  );
  ctx.stdout.write(`${JSON.stringify(toJson(PushResponseSchema, res), null, 2)}\n`);
  return 0;
}

async function deliveries(args: string[], ctx: CliContext): Promise<number> {
  const values = flagsOf(args, deliveriesFlags, "deliveries", deliveriesHelp, ctx);
  if (!values) return 0;
  const { baseUrl, client } = clientFor(values, ctx);
  const res = await rpc(baseUrl, () =>
    client.listDeliveries(
      { ownerName: values.owner ?? "", repositoryName: values.repository ?? "" },
      { timeoutMs: 30_000 },
    ),
  );
  const json = toJson(ListDeliveriesResponseSchema, res);
  ctx.stdout.write(`${JSON.stringify(res.deliveries.length ? json : { deliveries: [] }, null, 2)}\n`);
  return 0;
}

export const command: Command = {
  run: (args, ctx) =>
    runSubcommand(args, ctx, {
      command: "protocall registry",
      usage,
      subcommands: { serve, push, deliveries },
    }),
};
