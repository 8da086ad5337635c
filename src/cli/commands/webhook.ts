// `protocall webhook create|list|delete|send-test`: manage a registry's repository webhooks and send a
// synthetic push event to a listener. `protocall beta registry webhook …` runs the same code.
import { create, type JsonValue, toJson } from "@bufbuild/protobuf";
import { errorMessage, ProtocallError } from "../../core/errors";
import { createWebhookClient, parseWebhookEvent } from "../../core/webhooks/client";
import { encodeEvent, eventFromJson, samplePushEvent } from "../../core/webhooks/event";
import { post } from "../../core/webhooks/http-post";
import { defaultPrefix, isValidPrefix } from "../../core/webhooks/paths";
import {
  CreateWebhookResponseSchema,
  DeleteWebhookResponseSchema,
  ListWebhooksResponseSchema,
} from "../../gen/buf/alpha/registry/v1alpha1/webhook_pb";
import { defineFlags, type FlagSpec, flagsHelp, parseArgs, runSubcommand } from "../args";
import type { CliContext, Command } from "../context";
import { readFlagFile, readStdin } from "../io";
import { checkProxyFlag, proxyFlag, proxyTo } from "./proxy-flag";
import { openRemote, remoteFlags } from "./registry-remote";
import { certificateAdvice, trustFor } from "./trust";

/** The flags of create, list and delete, after each one's own. */
const commonFlags = defineFlags({
  ...remoteFlags,
  prefix: {
    kind: "string",
    value: "NAME",
    default: defaultPrefix,
    help: "package prefix of the webhook services in URL paths",
  },
  insecure: { kind: "bool", short: "k", help: "do not verify the registry's TLS certificate" },
});

const createFlags = defineFlags({
  owner: {
    kind: "string",
    value: "NAME",
    required: true,
    help: "user or organization that owns the repository",
  },
  repository: { kind: "string", value: "NAME", required: true, help: "repository name" },
  "callback-url": {
    kind: "string",
    value: "URL",
    required: true,
    help: "where the registry will POST events (see `protocall listen`)",
  },
  event: {
    kind: "string",
    value: "EVENT",
    default: "WEBHOOK_EVENT_REPOSITORY_PUSH",
    help: "the event to subscribe to; WEBHOOK_EVENT_REPOSITORY_PUSH is the only one",
  },
  ...commonFlags,
});

const listFlags = defineFlags({
  owner: {
    kind: "string",
    value: "NAME",
    required: true,
    help: "user or organization that owns the repository",
  },
  repository: {
    kind: "string",
    value: "NAME",
    help: "repository name (the registry emulator also accepts none: then it lists the owner's webhooks on every repository you administer)",
  },
  ...commonFlags,
});

const deleteFlags = defineFlags({
  id: {
    kind: "string",
    value: "ID",
    required: true,
    help: "the webhook's id (webhookId in the list output)",
  },
  ...commonFlags,
});

const sendTestFlags = defineFlags({
  to: {
    kind: "string",
    value: "URL",
    required: true,
    help: "the listener's callback URL (…/buf.alpha.webhook.v1alpha1.EventService/Event)",
  },
  data: {
    kind: "string",
    value: "FILE.json",
    help: 'the EventRequest to send, as protobuf JSON ("-" reads standard input)',
  },
  cacert: {
    kind: "string",
    value: "FILE",
    help: "also trust this CA certificate (PEM), e.g. the certificate of a listener started with --cert/--key",
  },
  insecure: { kind: "bool", short: "k", help: "do not verify the listener's TLS certificate" },
  ...proxyFlag,
});

const registryNotes = `
The API token comes from PROTOCALL_TOKEN, then BUF_TOKEN (each one token, or TOKEN@REMOTE entries
separated by commas of which the registry's applies), then the ~/.netrc entry (or the file named by
$NETRC) whose machine is the registry's host with its port, else the default entry. It is never a flag.
https calls trust SSL_CERT_FILE / SSL_CERT_DIR when set, else the system's roots; plus --cacert,
NODE_EXTRA_CA_CERTS, and the certificates that \`protocall listen --tls\` and
\`protocall registry serve --tls\` generated on this machine.
Calls go through HTTPS_PROXY / HTTP_PROXY / ALL_PROXY (NO_PROXY, localhost and loopback addresses
direct), or through --proxy, which replaces them.
Output: the response as protobuf JSON. Exit codes: 1 for usage errors, gRPC code x 8 when the
registry refuses the call (for example 16 x 8 = 128 for unauthenticated, 7 x 8 = 56 for permission denied).
`;

const helps = {
  create: `Usage: protocall webhook create --owner OWNER --repository REPO --callback-url URL --remote HOST [flags]

Subscribes a callback URL to pushes to a repository (needs the Admin role on it). A repository has at
most one webhook per event: to change the URL, delete the webhook and create it again.
The callback URL must use https, end exactly with /buf.alpha.webhook.v1alpha1.EventService/Event
(with the chosen prefix) and have no query or fragment; it is checked before anything is sent.

Flags:
${flagsHelp(createFlags)}${registryNotes}`,
  list: `Usage: protocall webhook list --owner OWNER --repository REPO --remote HOST [flags]

Lists the webhooks of a repository (needs the Admin role on it), following every page.

Flags:
${flagsHelp(listFlags)}${registryNotes}`,
  delete: `Usage: protocall webhook delete --id WEBHOOK_ID --remote HOST [flags]

Deletes a webhook (needs the Admin role on its repository). Events already pending may still be
delivered after the deletion. Find the id with \`protocall webhook list\`.

Flags:
${flagsHelp(deleteFlags)}${registryNotes}`,
  "send-test": `Usage: protocall webhook send-test --to URL [--data FILE.json] [--cacert FILE] [-k]

Sends one push event to a listener the way the registry does: POST, Connect unary,
Content-Type: application/proto, a binary EventRequest. Without --data the event is a synthetic push
to acme/petapis; with --data it is the EventRequest in the JSON file ("-" reads standard input).
Prints the HTTP status, the latency and the response body. An https listener started with
\`protocall listen --tls\` on this machine is trusted without flags.

Flags:
${flagsHelp(sendTestFlags)}`,
};

export const webhookUsage = `Usage: protocall webhook <create|list|delete|send-test> [flags]

  create      subscribe a callback URL to a repository's pushes
  list        list a repository's webhooks
  delete      delete a webhook
  send-test   send a synthetic push event to a listener

Run \`protocall webhook <subcommand> --help\` for its flags.
`;

/** Runs a webhook subcommand; `name` is what usage messages call the command. */
export function runWebhook(args: string[], ctx: CliContext, name = "protocall webhook"): Promise<number> {
  const named = (text: string) => text.replaceAll("protocall webhook", name);
  /** Parses a subcommand's flags; prints its help instead when asked. */
  const parsed = <S extends FlagSpec>(sub: keyof typeof helps, rest: string[], spec: S) => {
    const result = parseArgs(rest, spec, { command: `${name} ${sub}` });
    if (result.help) ctx.stdout.write(named(helps[sub]));
    return result;
  };
  return runSubcommand(args, ctx, {
    command: name,
    usage: named(webhookUsage),
    subcommands: {
      async create(rest) {
        const { values, help } = parsed("create", rest, createFlags);
        if (help) return 0;
        const event = parseWebhookEvent(values.event);
        if (event === undefined) {
          throw new ProtocallError(
            `invalid value "${values.event}" for --event: it must be WEBHOOK_EVENT_REPOSITORY_PUSH`,
          );
        }
        const webhook = await client(values, ctx).createWebhook({
          owner: values.owner,
          repository: values.repository,
          callbackUrl: values["callback-url"],
          event,
        });
        return print(
          ctx,
          toJson(CreateWebhookResponseSchema, create(CreateWebhookResponseSchema, { webhook })),
        );
      },
      async list(rest) {
        const { values, help } = parsed("list", rest, listFlags);
        if (help) return 0;
        const webhooks = await client(values, ctx).listWebhooks(values.owner, values.repository ?? "");
        if (webhooks.length === 0) return print(ctx, { webhooks: [] });
        const json = toJson(ListWebhooksResponseSchema, create(ListWebhooksResponseSchema, { webhooks }), {
          alwaysEmitImplicit: false,
        });
        return print(ctx, json);
      },
      async delete(rest) {
        const { values, help } = parsed("delete", rest, deleteFlags);
        if (help) return 0;
        await client(values, ctx).deleteWebhook(values.id);
        return print(ctx, toJson(DeleteWebhookResponseSchema, create(DeleteWebhookResponseSchema)));
      },
      async "send-test"(rest) {
        const { values, help } = parsed("send-test", rest, sendTestFlags);
        if (help) return 0;
        return sendTest(values, ctx);
      },
    },
  });
}

function print(ctx: CliContext, json: JsonValue): number {
  ctx.stdout.write(`${JSON.stringify(json, null, 2)}\n`);
  return 0;
}

function client(
  values: { remote: string; prefix: string; cacert?: string; insecure: boolean; proxy?: string },
  ctx: CliContext,
) {
  if (!isValidPrefix(values.prefix)) {
    throw new ProtocallError(
      `invalid value "${values.prefix}" for --prefix: it must be a package name such as buf or acme.registry`,
    );
  }
  const { baseUrl, access } = openRemote(values, ctx);
  return createWebhookClient({ baseUrl, access, prefix: values.prefix, remoteLabel: values.remote });
}

async function sendTest(
  values: { to: string; data?: string; cacert?: string; insecure: boolean; proxy?: string },
  ctx: CliContext,
): Promise<number> {
  const { to } = values;
  let url: URL;
  try {
    url = new URL(to);
  } catch {
    throw new ProtocallError(
      `invalid value "${to}" for --to: it is not a URL; write the listener's callback URL`,
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ProtocallError(`invalid value "${to}" for --to: it must be an http or https URL`);
  }
  if ((values.cacert || values.insecure) && url.protocol !== "https:") {
    throw new ProtocallError("--cacert and -k apply only to https URLs");
  }
  checkProxyFlag(values.proxy);
  let event = samplePushEvent();
  if (values.data !== undefined) {
    const file = values.data.replace(/^@/, "");
    const text = file === "-" ? await readStdin(ctx) : readFlagFile(ctx, file, "--data");
    let json: JsonValue;
    try {
      json = JSON.parse(text) as JsonValue;
    } catch (err) {
      throw new ProtocallError(`--data ${file} is not valid JSON: ${errorMessage(err)}`);
    }
    try {
      event = eventFromJson(json);
    } catch (err) {
      throw new ProtocallError(
        `--data ${file} is not a buf.alpha.webhook.v1alpha1.EventRequest: ${errorMessage(err)}`,
      );
    }
  }
  let res: Awaited<ReturnType<typeof post>>;
  try {
    res = await post(
      url,
      encodeEvent(event),
      { "content-type": "application/proto", "connect-protocol-version": "1" },
      { ...trustFor(ctx, values), timeoutMs: 30_000, proxy: proxyTo(url, values.proxy, ctx) },
    );
  } catch (err) {
    const message = errorMessage(err);
    ctx.stderr.write(`protocall: cannot reach ${to}: ${message}${certificateAdvice(message)}\n`);
    return 14 * 8;
  }
  const body = res.body.toString("utf8");
  ctx.stdout.write(
    `${JSON.stringify({ status: res.status, latencyMs: Math.round(res.latencyMs * 10) / 10, response: body }, null, 2)}\n`,
  );
  if (res.status === 200) return 0;
  const code = connectCodeOf(body);
  ctx.stderr.write(`protocall: the listener answered HTTP ${res.status}${body ? `: ${body}` : ""}\n`);
  return code * 8 || 1;
}

const codeNumbers: Record<string, number> = {
  canceled: 1,
  unknown: 2,
  invalid_argument: 3,
  deadline_exceeded: 4,
  not_found: 5,
  already_exists: 6,
  permission_denied: 7,
  resource_exhausted: 8,
  failed_precondition: 9,
  aborted: 10,
  out_of_range: 11,
  unimplemented: 12,
  internal: 13,
  unavailable: 14,
  data_loss: 15,
  unauthenticated: 16,
};

function connectCodeOf(body: string): number {
  try {
    const code = (JSON.parse(body) as { code?: string }).code;
    return code && Object.hasOwn(codeNumbers, code) ? codeNumbers[code] : 2;
  } catch {
    return 2;
  }
}

export const command: Command = {
  run: (args, ctx) => runWebhook(args, ctx),
};
