// The last delivery attempt of each webhook of a repository, as the registry emulator records them
// (protocall.registry.v1.RegistryService/ListDeliveries), so the Webhooks view can say whether the
// registry could deliver a push to a webhook's callback URL and, when not, why (an untrusted
// certificate, a listener that is not running, an error status). Only the emulator has that service:
// a registry that answers 404 or unimplemented has no status to give (undefined), which is not an error.
import { fromJson, type JsonValue } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { ListDeliveriesResponseSchema } from "../../gen/protocall/registry/v1/registry_pb";
import { errorMessage, ProtocallError } from "../errors";
import { post } from "./http-post";

/** A webhook's latest delivery attempt. */
export interface LastDelivery {
  /** The attempt's sequence number (grows with every attempt of the registry). */
  readonly id: number;
  readonly webhookId: string;
  readonly commitId: string;
  readonly callbackUrl: string;
  /** ISO 8601. */
  readonly attemptTime?: string;
  readonly success: boolean;
  /** 0 when no HTTP response arrived. */
  readonly httpStatus: number;
  /** Why it failed; empty on success. */
  readonly error: string;
}

export interface DeliveryStatusOptions {
  /** The registry's base URL, e.g. `https://127.0.0.1:8443`. */
  readonly baseUrl: string;
  readonly token: string;
  /** Extra trusted CA certificates (PEM). */
  readonly ca?: string;
  readonly timeoutMs?: number;
}

const path = "/protocall.registry.v1.RegistryService/ListDeliveries";

/**
 * The last attempt per webhook id of `owner/repository`, or undefined when the registry records no
 * deliveries (it is not the emulator). Rejects with a ProtocallError on any other failure.
 */
export async function lastDeliveries(
  options: DeliveryStatusOptions,
  owner: string,
  repository: string,
): Promise<Map<string, LastDelivery> | undefined> {
  const url = options.baseUrl.replace(/\/+$/, "") + path;
  let res: Awaited<ReturnType<typeof post>>;
  try {
    res = await post(
      url,
      Buffer.from(JSON.stringify({ owner_name: owner, repository_name: repository })),
      {
        "content-type": "application/json",
        "connect-protocol-version": "1",
        authorization: `Bearer ${options.token}`,
      },
      { ca: options.ca, timeoutMs: options.timeoutMs ?? 15_000 },
    );
  } catch (err) {
    throw new ProtocallError(`cannot read the deliveries of ${owner}/${repository}: ${errorMessage(err)}`);
  }
  const text = res.body.toString("utf8");
  let json: unknown;
  try {
    json = JSON.parse(text || "{}");
  } catch {
    json = undefined;
  }
  const code = (json as { code?: unknown } | undefined)?.code;
  if (res.status === 404 || code === "unimplemented") return undefined;
  if (res.status !== 200 || json === undefined) {
    const message = (json as { message?: unknown } | undefined)?.message;
    throw new ProtocallError(
      `cannot read the deliveries of ${owner}/${repository}: ${typeof message === "string" ? message : `HTTP ${res.status}`}`,
    );
  }
  const parsed = fromJson(ListDeliveriesResponseSchema, json as JsonValue, { ignoreUnknownFields: true });
  const last = new Map<string, LastDelivery>();
  for (const d of parsed.deliveries) {
    const id = Number(d.id);
    const seen = last.get(d.webhookId);
    if (seen && seen.id > id) continue;
    last.set(d.webhookId, {
      id,
      webhookId: d.webhookId,
      commitId: d.commitId,
      callbackUrl: d.callbackUrl,
      attemptTime: d.attemptTime ? timestampDate(d.attemptTime).toISOString() : undefined,
      success: d.success,
      httpStatus: d.httpStatus,
      error: d.error,
    });
  }
  return last;
}
