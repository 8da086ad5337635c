// A synthetic push sent the way the registry sends events (Connect unary, binary EventRequest): the
// sample push of `samplePushEvent`, or any EventRequest given as protobuf JSON.
import type { JsonValue } from "@bufbuild/protobuf";
import type { EventRequest } from "../../gen/buf/alpha/webhook/v1alpha1/event_pb";
import { errorMessage, ProtocallError } from "../errors";
import { encodeEvent, eventFromJson, samplePushEvent } from "./event";
import { type PostOptions, type PostResult, post } from "./http-post";

/** Parses an EventRequest given as protobuf JSON; a ProtocallError says what is wrong. */
export function testEventFromJson(json: JsonValue): EventRequest {
  try {
    return eventFromJson(json);
  } catch (err) {
    throw new ProtocallError(`not a buf.alpha.webhook.v1alpha1.EventRequest: ${errorMessage(err)}`);
  }
}

/** POSTs `event` (default: a sample push of acme/petapis) to `to` as the registry would. */
export function sendTestEvent(
  to: string,
  event: EventRequest = samplePushEvent(),
  options: PostOptions = {},
): Promise<PostResult> {
  return post(
    to,
    encodeEvent(event),
    { "content-type": "application/proto", "connect-protocol-version": "1" },
    options,
  );
}
