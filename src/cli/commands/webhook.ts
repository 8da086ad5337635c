// `protocall webhook create|list|delete|send-test`: manage a registry's repository webhooks and send a
// synthetic push event to a listener. `protocall beta registry webhook …` runs the same code.
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { create, type JsonValue, toJson } from "@bufbuild/protobuf";
import { errorMessage, ProtocallError } from "../../core/errors";
import { createWebhookClient, parseWebhookEvent } from "../../core/webhooks/client";
import { encodeEvent, eventFromJson, samplePushEvent } from "../../core/webhooks/event";
import { post } from "../../core/webhooks/http-post";
import { defaultPrefix, isValidPrefix } from "../../core/webhooks/paths";
import { resolveToken } from "../../core/webhooks/token";
import {
  CreateWebhookResponseSchema,
  DeleteWebhookResponseSchema,
  ListWebhooksResponseSchema,
} from "../../gen/buf/alpha/registry/v1alpha1/webhook_pb";
import type { CliContext, Command } from "../context";

const common = `  --remote HOST      the registry instance domain (https://HOST); a full URL such as
                     http://127.0.0.1:8080 is accepted too
  --prefix NAME      package prefix of the webhook services in URL paths (default "buf")
  --cacert FILE      also trust this CA certificate (PEM) for the registry's TLS
  -k, --insecure     do not verify the registry's TLS certificate
  -h, --help         show this help

The API token comes from PROTOCALL_TOKEN, then BUF_TOKEN, then the password of the registry host's
entry in ~/.netrc (or the file named by $NETRC). It is never a flag.
Output: the response as protobuf JSON. Exit codes: 1 for usage errors, gRPC code x 8 when the
registry refuses the call (for example 16 x 8 = 128 for unauthenticated, 7 x 8 = 56 for permission denied).
`;

const helps: Record<string, string> = {
  create: `Usage: protocall webhook create --owner OWNER --repository REPO --callback-url URL --remote HOST [flags]

Subscribes a callback URL to pushes to a repository (needs the Admin role on it). A repository has at
most one webhook per event: to change the URL, delete the webhook and create it again.
The callback URL must use https, end exactly with /buf.alpha.webhook.v1alpha1.EventService/Event
(with the chosen prefix) and have no query or fragment; it is checked before anything is sent.

Flags:
  --owner NAME          user or organization that owns the repository
  --repository NAME     repository name
  --callback-url URL    where the registry will POST events (see \`protocall listen\`)
  --event EVENT         WEBHOOK_EVENT_REPOSITORY_PUSH (the default and only event)
${common}`,
  list: `Usage: protocall webhook list --owner OWNER --repository REPO --remote HOST [flags]

Lists the webhooks of a repository (needs the Admin role on it), following every page.

Flags:
  --owner NAME          user or organization that owns the repository
  --repository NAME     repository name (the registry emulator also accepts none: then it lists the
                        owner's webhooks on every repository you administer)
${common}`,
  delete: `Usage: protocall webhook delete --id WEBHOOK_ID --remote HOST [flags]

Deletes a webhook (needs the Admin role on its repository). Events already pending may still be
delivered after the deletion. Find the id with \`protocall webhook list\`.

Flags:
  --id ID               the webhook's id (webhookId in the list output)
${common}`,
  "send-test": `Usage: protocall webhook send-test --to URL [--data FILE.json] [--cacert FILE] [-k]

Sends one push event to a listener the way the registry does: POST, Connect unary,
Content-Type: application/proto, a binary EventRequest. Without --data the event is a synthetic push
to acme/petapis; with --data it is the EventRequest in the JSON file ("-" reads standard input).
Prints the HTTP status, the latency and the response body.

Flags:
  --to URL           the listener's callback URL (…/buf.alpha.webhook.v1alpha1.EventService/Event)
  --data FILE.json   the EventRequest to send, as protobuf JSON
  --cacert FILE      also trust this CA certificate (PEM), e.g. the listener's self-signed certificate
  -k, --insecure     do not verify the listener's TLS certificate
  -h, --help         show this help
`,
};

export const webhookUsage = `Usage: protocall webhook <create|list|delete|send-test> [flags]

  create      subscribe a callback URL to a repository's pushes
  list        list a repository's webhooks
  delete      delete a webhook
  send-test   send a synthetic push event to a listener

Run \`protocall webhook <subcommand> --help\` for its flags.
`;

/** Runs a webhook subcommand; `name` is what usage messages call the command. */
export async function runWebhook(
  args: string[],
  ctx: CliContext,
  name = "protocall webhook",
): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === undefined || sub === "-h" || sub === "--help" || sub === "help") {
    (sub === undefined ? ctx.stderr : ctx.stdout).write(webhookUsage.replaceAll("protocall webhook", name));
    return sub === undefined ? 1 : 0;
  }
  if (!Object.hasOwn(helps, sub)) {
    throw new ProtocallError(`unknown subcommand "${sub}" of ${name}: use create, list, delete or send-test`);
  }
  if (rest.includes("-h") || rest.includes("--help")) {
    ctx.stdout.write(helps[sub].replaceAll("protocall webhook", name));
    return 0;
  }
  if (sub === "send-test") return sendTest(rest, ctx);
  const { values } = parse(
    rest,
    {
      remote: { type: "string" },
      prefix: { type: "string" },
      cacert: { type: "string" },
      insecure: { type: "boolean", short: "k" },
      owner: { type: "string" },
      repository: { type: "string" },
      "callback-url": { type: "string" },
      event: { type: "string" },
      id: { type: "string" },
    },
    `${name} ${sub}`,
  );
  const allowed: Record<string, string[]> = {
    create: ["owner", "repository", "callback-url", "event"],
    list: ["owner", "repository"],
    delete: ["id"],
  };
  for (const key of ["owner", "repository", "callback-url", "event", "id"]) {
    if (values[key] !== undefined && !allowed[sub].includes(key)) {
      throw new ProtocallError(`--${key} is not a flag of ${name} ${sub}; see \`${name} ${sub} --help\``);
    }
  }
  const need = (key: string): string => {
    const v = values[key];
    if (typeof v !== "string" || v === "") {
      throw new ProtocallError(`${name} ${sub} needs --${key}; see \`${name} ${sub} --help\``);
    }
    return v;
  };
  const remote = need("remote");
  const baseUrl = remoteBaseUrl(remote);
  const host = new URL(baseUrl).host;
  const prefix = (values.prefix as string | undefined) ?? defaultPrefix;
  if (!isValidPrefix(prefix)) throw new ProtocallError(`--prefix "${prefix}" is not a valid package name`);
  const token = resolveToken(ctx.env, host);
  if (!token) {
    throw new ProtocallError(
      `no API token for ${host}: set PROTOCALL_TOKEN (or BUF_TOKEN), or add "machine ${host} password <token>" to ~/.netrc`,
    );
  }
  const client = createWebhookClient({
    baseUrl,
    token: token.token,
    prefix,
    ca: values.cacert ? readText(values.cacert as string, "--cacert") : undefined,
    insecure: values.insecure === true,
    remoteLabel: remote,
  });
  let out: JsonValue;
  if (sub === "create") {
    const eventText = (values.event as string | undefined) ?? "WEBHOOK_EVENT_REPOSITORY_PUSH";
    const event = parseWebhookEvent(eventText);
    if (event === undefined) {
      throw new ProtocallError(
        `--event "${eventText}" is not a webhook event: use WEBHOOK_EVENT_REPOSITORY_PUSH`,
      );
    }
    const webhook = await client.createWebhook({
      owner: need("owner"),
      repository: need("repository"),
      callbackUrl: need("callback-url"),
      event,
    });
    out = toJson(CreateWebhookResponseSchema, create(CreateWebhookResponseSchema, { webhook }));
  } else if (sub === "list") {
    const webhooks = await client.listWebhooks(
      need("owner"),
      (values.repository as string | undefined) ?? "",
    );
    out = toJson(ListWebhooksResponseSchema, create(ListWebhooksResponseSchema, { webhooks }), {
      alwaysEmitImplicit: false,
    });
    if (webhooks.length === 0) out = { webhooks: [] };
  } else {
    await client.deleteWebhook(need("id"));
    out = toJson(DeleteWebhookResponseSchema, create(DeleteWebhookResponseSchema));
  }
  ctx.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
  return 0;
}

async function sendTest(args: string[], ctx: CliContext): Promise<number> {
  const { values } = parse(
    args,
    {
      to: { type: "string" },
      data: { type: "string" },
      cacert: { type: "string" },
      insecure: { type: "boolean", short: "k" },
    },
    "protocall webhook send-test",
  );
  const to = values.to as string | undefined;
  if (!to)
    throw new ProtocallError("protocall webhook send-test needs --to URL (the listener's callback URL)");
  let url: URL;
  try {
    url = new URL(to);
  } catch {
    throw new ProtocallError(`--to "${to}" is not a URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ProtocallError(`--to "${to}" must be an http or https URL`);
  }
  if ((values.cacert || values.insecure) && url.protocol !== "https:") {
    throw new ProtocallError("--cacert and -k apply only to https URLs");
  }
  let event = samplePushEvent();
  if (typeof values.data === "string") {
    const file = values.data.replace(/^@/, "");
    const text = file === "-" ? await readAll(ctx.stdin) : readText(file, "--data");
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
      {
        ca: values.cacert ? readText(values.cacert as string, "--cacert") : undefined,
        insecure: values.insecure === true,
        timeoutMs: 30_000,
      },
    );
  } catch (err) {
    ctx.stderr.write(`protocall: cannot reach ${to}: ${errorMessage(err)}\n`);
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

/** `--remote HOST` means https://HOST; a full http(s) URL is used as given. */
export function remoteBaseUrl(remote: string): string {
  const text = remote.includes("://") ? remote : `https://${remote}`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ProtocallError(`--remote "${remote}" is not a host name or URL`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new ProtocallError(`--remote "${remote}" must be a host name or an http(s) URL`);
  }
  return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, "")}`;
}

type Spec = NonNullable<Parameters<typeof parseArgs>[0]>["options"];

/** node:util parseArgs, with its errors turned into one-line usage errors. */
export function parse(
  args: string[],
  options: Spec,
  command: string,
  allowPositionals = false,
): { values: Record<string, string | boolean | (string | boolean)[] | undefined>; positionals: string[] } {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals });
  } catch (err) {
    throw new ProtocallError(`${errorMessage(err).replace(/\.$/, "")}; see \`${command} --help\``);
  }
}

export function readText(file: string, flag: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (err) {
    throw new ProtocallError(`cannot read ${flag} file ${file}: ${errorMessage(err)}`);
  }
}

export async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(typeof c === "string" ? Buffer.from(c) : (c as Buffer));
  return Buffer.concat(chunks).toString("utf8");
}

export const command: Command = {
  run: (args, ctx) => runWebhook(args, ctx),
};
