// Replaying a stored delivery: its bytes are POSTed again (Connect unary) to the listener that received
// it, to the forward URL, or to any URL. A rejected request whose body was cut to an excerpt cannot be.
import type { JsonValue } from "@bufbuild/protobuf";
import { ProtocallError } from "../errors";
import { encodeEvent, eventFromJson } from "./event";
import { type PostOptions, type PostResult, post } from "./http-post";
import type { StoredDelivery } from "./store";

/**
 * The body and content type to replay. A Connect unary delivery (application/proto or application/json)
 * is sent again byte for byte with its content type; a delivery that came over gRPC or gRPC-Web is
 * re-encoded as a binary EventRequest, the form the registry uses.
 */
export function replayPayload(delivery: StoredDelivery): { body: Uint8Array; contentType: string } {
  if (delivery.bodySize !== undefined) {
    throw new ProtocallError(
      `delivery ${delivery.id} was rejected and only the first bytes of its ${delivery.bodySize}-byte body were kept, so it cannot be sent again`,
    );
  }
  const contentType = delivery.headers["content-type"] ?? "application/proto";
  const raw = Buffer.from(delivery.body, "base64");
  if (/^application\/(proto|json)\b/i.test(contentType) || delivery.event === undefined) {
    return { body: raw, contentType };
  }
  return { body: encodeEvent(eventFromJson(delivery.event as JsonValue)), contentType: "application/proto" };
}

export function replayDelivery(
  delivery: StoredDelivery,
  to: string,
  options: PostOptions = {},
): Promise<PostResult> {
  const { body, contentType } = replayPayload(delivery);
  return post(
    to,
    body,
    {
      "content-type": contentType,
      "connect-protocol-version": "1",
      "x-protocall-replay-of": String(delivery.id),
    },
    options,
  );
}
