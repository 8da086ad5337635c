// Client of a registry's WebhookService: CreateWebhook, ListWebhooks (all pages), DeleteWebhook.
// The registry speaks Connect unary with JSON bodies: requests are written with snake_case keys, and
// responses are parsed with the protobuf JSON parser, which accepts both key spellings. The token and
// trust come from the one registry access module (src/core/registry/access.ts). The calls go over
// http-post, not the Connect transport of the module API: a JSON POST needs no more, and loading
// connect-node made every `protocall webhook` command about 40 ms slower to start.
import { type DescMessage, fromJson, type JsonValue, type MessageShape } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import {
  CreateWebhookResponseSchema,
  DeleteWebhookResponseSchema,
  ListWebhooksResponseSchema,
  type Webhook,
  WebhookEvent,
  WebhookEventSchema,
} from "../../gen/buf/alpha/registry/v1alpha1/webhook_pb";
import { errorMessage } from "../errors";
import { proxyFor } from "../invoke/proxy-choice";
import { authorizationHeaders, type RemoteAccess } from "../registry/access";
import { callbackUrlProblems } from "./callback-url";
import { WebhookError } from "./errors";
import { post } from "./http-post";
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

  async function call(rpc: string, body: Record<string, unknown>, context: CallContext): Promise<unknown> {
    const url = base + webhookServicePath(prefix, rpc);
    let res: Awaited<ReturnType<typeof post>>;
    try {
      res = await post(
        url,
        Buffer.from(JSON.stringify(body)),
        {
          "content-type": "application/json",
          "connect-protocol-version": "1",
          ...authorizationHeaders(options.access),
          accept: "application/json",
        },
        {
          trusted: options.access.ca,
          insecure: options.access.insecure,
          timeoutMs: options.timeoutMs,
          proxy: proxyFor(new URL(url), options.access.proxy),
        },
      );
    } catch (err) {
      throw new WebhookError(
        "unreachable",
        Code.Unavailable,
        `cannot reach the registry at ${url}: ${errorMessage(err)}; check --remote and your network`,
      );
    }
    const text = res.body.toString("utf8");
    let json: unknown;
    try {
      json = text === "" ? {} : JSON.parse(text);
    } catch {
      json = undefined;
    }
    if (res.status === 200 && json !== undefined && typeof json === "object") return json;
    throw errorFromResponse(res.status, json, text, {
      ...context,
      rpc,
      url,
      host,
      remote: options.remoteLabel ?? host,
    });
  }

  return {
    async createWebhook(input) {
      const problems = callbackUrlProblems(input.callbackUrl, prefix);
      if (problems.length) {
        throw new WebhookError("invalid_argument", Code.InvalidArgument, problems.join("; "), 1);
      }
      const event = input.event ?? WebhookEvent.REPOSITORY_PUSH;
      const json = await call(
        "CreateWebhook",
        {
          webhook_event: WebhookEvent[event] ? `WEBHOOK_EVENT_${WebhookEvent[event]}` : event,
          owner_name: input.owner,
          repository_name: input.repository,
          callback_url: input.callbackUrl,
        },
        { owner: input.owner, repository: input.repository },
      );
      const res = parse(CreateWebhookResponseSchema, json, "CreateWebhook");
      if (!res.webhook) throw new WebhookError("other", Code.Internal, "the registry returned no webhook");
      return res.webhook;
    },
    async listWebhooks(owner, repository) {
      const all: Webhook[] = [];
      let pageToken = "";
      const seen = new Set<string>();
      for (;;) {
        const json = await call(
          "ListWebhooks",
          { repository_name: repository, owner_name: owner, ...(pageToken ? { page_token: pageToken } : {}) },
          { owner, repository },
        );
        const res = parse(ListWebhooksResponseSchema, json, "ListWebhooks");
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
      const json = await call("DeleteWebhook", { webhook_id: webhookId }, { webhookId });
      parse(DeleteWebhookResponseSchema, json, "DeleteWebhook");
    },
  };
}

interface CallContext {
  owner?: string;
  repository?: string;
  webhookId?: string;
}

function parse<Desc extends DescMessage>(schema: Desc, json: unknown, rpc: string): MessageShape<Desc> {
  try {
    // Unknown fields are ignored: a newer registry may add fields to its responses.
    return fromJson(schema, json as JsonValue, { ignoreUnknownFields: true });
  } catch (err) {
    throw new WebhookError(
      "other",
      Code.Internal,
      `the registry's ${rpc} response is not a valid ${schema.typeName}: ${errorMessage(err)}`,
    );
  }
}

function safeHost(base: string): string {
  try {
    return new URL(base).host;
  } catch {
    return base;
  }
}

const codeByName: Record<string, Code> = {
  canceled: Code.Canceled,
  unknown: Code.Unknown,
  invalid_argument: Code.InvalidArgument,
  deadline_exceeded: Code.DeadlineExceeded,
  not_found: Code.NotFound,
  already_exists: Code.AlreadyExists,
  permission_denied: Code.PermissionDenied,
  resource_exhausted: Code.ResourceExhausted,
  failed_precondition: Code.FailedPrecondition,
  aborted: Code.Aborted,
  out_of_range: Code.OutOfRange,
  unimplemented: Code.Unimplemented,
  internal: Code.Internal,
  unavailable: Code.Unavailable,
  data_loss: Code.DataLoss,
  unauthenticated: Code.Unauthenticated,
};

/** The Connect code an HTTP status stands for when the body carries none (Connect protocol table). */
function codeFromStatus(status: number): Code {
  switch (status) {
    case 400:
      return Code.InvalidArgument;
    case 401:
      return Code.Unauthenticated;
    case 403:
      return Code.PermissionDenied;
    case 404:
      return Code.Unimplemented;
    case 408:
      return Code.DeadlineExceeded;
    case 409:
      return Code.AlreadyExists;
    case 412:
      return Code.FailedPrecondition;
    case 429:
    case 502:
    case 503:
    case 504:
      return Code.Unavailable;
    default:
      return Code.Unknown;
  }
}

/** The values a user gives for each RPC, named as the CLI flags that carry them. */
const flagsOf: Record<string, string> = {
  CreateWebhook: "--owner, --repository, --callback-url and --event",
  ListWebhooks: "--owner and --repository",
  DeleteWebhook: "--id",
};

function errorFromResponse(
  status: number,
  json: unknown,
  text: string,
  ctx: CallContext & { rpc: string; url: string; host: string; remote: string },
): WebhookError {
  const body = json && typeof json === "object" ? (json as { code?: unknown; message?: unknown }) : {};
  const code =
    typeof body.code === "string" && Object.hasOwn(codeByName, body.code)
      ? codeByName[body.code]
      : status === 200
        ? Code.Internal
        : codeFromStatus(status);
  const detail =
    typeof body.message === "string" && body.message
      ? body.message
      : text && !json
        ? `HTTP ${status}: ${text.slice(0, 200)}`
        : `HTTP ${status}`;
  const repo = ctx.owner !== undefined ? `${ctx.owner}/${ctx.repository}` : "the repository";
  // Only a message about webhooks counts: "account disabled" on a bad token is an authentication error.
  const disabled = /webhooks?\b.*\b(disabled|not enabled)\b/i.test(detail);
  if (disabled || (code === Code.Unimplemented && status === 404)) {
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
