// Client of a registry's WebhookService: CreateWebhook, ListWebhooks (all pages), DeleteWebhook.
// The registry speaks Connect unary with JSON bodies: requests are written with the proto field names
// (snake_case keys), and responses are read by the protobuf JSON parser, which accepts both key
// spellings and ignores fields a newer registry adds. Calls go through the one registry transport
// (src/core/registry/access.ts), with its token and trust.
import {
  create,
  type DescMessage,
  type DescMethodUnary,
  type MessageInitShape,
  type MessageShape,
} from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  CreateWebhookRequestSchema,
  DeleteWebhookRequestSchema,
  ListWebhooksRequestSchema,
  type Webhook,
  WebhookEvent,
  WebhookEventSchema,
  WebhookService,
} from "../../gen/buf/alpha/registry/v1alpha1/webhook_pb";
import { errorMessage } from "../errors";
import { type RemoteAccess, registryTransport } from "../registry/access";
import { codeName } from "../registry/registry-errors";
import { callbackUrlProblems } from "./callback-url";
import { WebhookError } from "./errors";
import { defaultPrefix, webhookServicePath } from "./paths";

export interface WebhookClientOptions {
  /** The registry's base URL, e.g. `https://buf.example.com` or `http://127.0.0.1:8080`. */
  readonly baseUrl: string;
  /** The token (sent as `Authorization: Bearer <token>`) and trust, from remoteAccess. */
  readonly access: RemoteAccess;
  /** Package prefix of the services (default `buf`). */
  readonly prefix?: string;
  readonly timeoutMs?: number;
  /** How the user named the registry (the --remote value), for commands suggested in messages. */
  readonly remoteLabel?: string;
}

export interface CreateWebhookInput {
  readonly owner: string;
  readonly repository: string;
  readonly callbackUrl: string;
  /** Default WEBHOOK_EVENT_REPOSITORY_PUSH. */
  readonly event?: WebhookEvent;
}

export interface WebhookClient {
  createWebhook(input: CreateWebhookInput): Promise<Webhook>;
  /** Every webhook of the repository, following next_page_token to the end. */
  listWebhooks(owner: string, repository: string): Promise<Webhook[]>;
  deleteWebhook(webhookId: string): Promise<void>;
}

/** Parses a WebhookEvent given by name (`WEBHOOK_EVENT_REPOSITORY_PUSH`, or `REPOSITORY_PUSH`). */
export function parseWebhookEvent(text: string): WebhookEvent | undefined {
  const name = text.startsWith("WEBHOOK_EVENT_") ? text : `WEBHOOK_EVENT_${text}`;
  const value = WebhookEventSchema.values.find((v) => v.name === name.toUpperCase());
  return value && value.number !== WebhookEvent.UNSPECIFIED ? (value.number as WebhookEvent) : undefined;
}
export function createWebhookClient(options: WebhookClientOptions): WebhookClient {
  const prefix = options.prefix ?? defaultPrefix;
  const base = options.baseUrl.replace(/\/+$/, "");
  const host = safeHost(base);
  const transport = registryTransport(options.access, {
    baseUrl: base,
    binary: false,
    jsonOptions: { useProtoFieldName: true, ignoreUnknownFields: true },
  });

  async function call<I extends DescMessage, O extends DescMessage>(
    method: DescMethodUnary<I, O>,
    request: MessageInitShape<I>,
    context: CallContext,
  ): Promise<MessageShape<O>> {
    const rpc = method.name;
    const url = base + webhookServicePath(prefix, rpc);
    try {
      const res = await transport.unary(
        prefixed(method, prefix),
        undefined,
        options.timeoutMs ?? 30_000,
        undefined,
        create(method.input, request),
      );
      return res.message;
    } catch (err) {
      const cause = networkCause(err);
      if (cause !== undefined) {
        throw new WebhookError(
          "unreachable",
          Code.Unavailable,
          `cannot reach the registry at ${url}: ${cause}; check --remote and your network`,
        );
      }
      const e = ConnectError.from(err);
      throw errorFromResponse(e.code, e.rawMessage, {
        ...context,
        rpc,
        url,
        host,
        remote: options.remoteLabel ?? host,
      });
    }
  }

  return {
    async createWebhook(input) {
      const problems = callbackUrlProblems(input.callbackUrl, prefix);
      if (problems.length) {
        throw new WebhookError("invalid_argument", Code.InvalidArgument, problems.join("; "), 1);
      }
      const res = await call(
        WebhookService.method.createWebhook,
        {
          webhookEvent: input.event ?? WebhookEvent.REPOSITORY_PUSH,
          ownerName: input.owner,
          repositoryName: input.repository,
          callbackUrl: input.callbackUrl,
        },
        { owner: input.owner, repository: input.repository },
      );
      if (!res.webhook) throw new WebhookError("other", Code.Internal, "the registry returned no webhook");
      return res.webhook;
    },
    async listWebhooks(owner, repository) {
      const all: Webhook[] = [];
      let pageToken = "";
      const seen = new Set<string>();
      for (;;) {
        const res = await call(
          WebhookService.method.listWebhooks,
          { repositoryName: repository, ownerName: owner, pageToken },
          { owner, repository },
        );
        all.push(...res.webhooks);
        if (!res.nextPageToken) return all;
        if (seen.has(res.nextPageToken)) {
          throw new WebhookError(
            "other",
            Code.Internal,
            `the registry returned the page token "${res.nextPageToken}" twice; stopping to avoid a loop`,
          );
        }
        seen.add(res.nextPageToken);
        pageToken = res.nextPageToken;
      }
    },
    async deleteWebhook(webhookId) {
      await call(WebhookService.method.deleteWebhook, { webhookId }, { webhookId });
    },
  };
}

interface CallContext {
  owner?: string;
  repository?: string;
  webhookId?: string;
}

/** The method as served under `prefix` (the registry's package prefix, `buf` by default). */
function prefixed<I extends DescMessage, O extends DescMessage>(
  method: DescMethodUnary<I, O>,
  prefix: string,
): DescMethodUnary<I, O> {
  if (prefix === defaultPrefix) return method;
  const typeName = method.parent.typeName.replace(/^buf\./, `${prefix}.`);
  return { ...method, parent: { ...method.parent, typeName } };
}

/** Node's network and TLS failures, which say the registry was not reached; undefined for others. */
function networkCause(err: unknown): string | undefined {
  const seen = new Set<unknown>();
  for (let e = err; e instanceof Error && !seen.has(e); e = e.cause) {
    seen.add(e);
    const code = (e as NodeJS.ErrnoException).code;
    if (typeof code === "string" && !(e instanceof ConnectError)) return errorMessage(e);
  }
  return undefined;
}

function safeHost(base: string): string {
  try {
    return new URL(base).host;
  } catch {
    return base;
  }
}

/** The values a user gives for each RPC, named as the CLI flags that carry them. */
const flagsOf: Record<string, string> = {
  CreateWebhook: "--owner, --repository, --callback-url and --event",
  ListWebhooks: "--owner and --repository",
  DeleteWebhook: "--id",
};

function errorFromResponse(
  code: Code,
  message: string,
  ctx: CallContext & { rpc: string; url: string; host: string; remote: string },
): WebhookError {
  const detail = message || codeName(code);
  const repo = ctx.owner !== undefined ? `${ctx.owner}/${ctx.repository}` : "the repository";
  // Only a message about webhooks counts: "account disabled" on a bad token is an authentication error.
  const disabled = /webhooks?\b.*\b(disabled|not enabled)\b/i.test(detail);
  // A registry without the WebhookService answers 404, which Connect reads as unimplemented.
  if (disabled || code === Code.Unimplemented) {
    return new WebhookError(
      "webhooks_disabled",
      code,
      `webhooks are disabled on the registry at ${ctx.host} (${detail}): ask your registry admin to enable them` +
        (disabled ? "" : `, or check that --remote points at the registry`),
    );
  }
  switch (code) {
    case Code.Unauthenticated:
      return new WebhookError(
        "unauthenticated",
        code,
        `the registry at ${ctx.host} did not accept the token (${detail}): check the token in PROTOCALL_TOKEN, BUF_TOKEN or the password of "machine ${ctx.host}" in ~/.netrc`,
      );
    case Code.PermissionDenied:
      return new WebhookError(
        "permission_denied",
        code,
        `permission denied (${detail}): managing the webhooks of ${repo} needs the Admin role on ${repo}; ask an Admin of the repository to grant it`,
      );
    case Code.AlreadyExists:
      return new WebhookError(
        "already_exists",
        code,
        `${repo} already has a webhook for this event (${detail}); a repository allows one: delete the existing one first (find its id with \`protocall webhook list --owner ${ctx.owner ?? "OWNER"} --repository ${ctx.repository ?? "REPOSITORY"} --remote ${ctx.remote}\`, then \`protocall webhook delete --id ID --remote ${ctx.remote}\`)`,
      );
    case Code.InvalidArgument:
      return new WebhookError(
        "invalid_argument",
        code,
        `the registry rejected the ${ctx.rpc} request: ${detail}; check ${flagsOf[ctx.rpc] ?? "the request"}`,
      );
    case Code.NotFound:
      return new WebhookError(
        "not_found",
        code,
        ctx.webhookId !== undefined
          ? `webhook "${ctx.webhookId}" not found (${detail}): list the repository's webhooks to find its id`
          : `not found (${detail}): check --owner and --repository`,
      );
    default:
      return new WebhookError("other", code, `${ctx.rpc} failed (${detail})`);
  }
}
