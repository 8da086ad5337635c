// A call's result as the plain outcome that assertions and captures are checked against
// (outcome.ts). The only converter: the checked-request runner (checked-request.ts) makes every
// outcome here, for `protocall run`, the editor's Send and the Test Explorer alike.
//
// Messages are the values the call pipeline hands to CallObserver.value: proto JSON with every field
// WITHOUT presence at its default (`"count": 0`, `"tags": []`), and every field WITH presence
// (a message field, a proto2 or proto3 `optional` field, a oneof member) that is not set left out.
// So `message.count == 0` holds for a zero count, and `message.options !exists` for an unset
// message field; `null` is only ever a value the message holds (google.protobuf.Value's null).
// The printed JSON is not used: it leaves implicit defaults out (or, with --emit-defaults, writes
// `null` for unset fields with presence), so it would make assertions depend on printing flags.
import type { JsonValue } from "@bufbuild/protobuf";
import type { CallErrorDetail, CallResult } from "../invoke/call-session";
import type { CallOutcome, OutcomeDetail } from "./outcome";

/**
 * The outcome of a call made through the call session. `values` are the response messages as
 * CallObserver.value received them; a request none of whose checks reads messages passes none, and
 * its outcome has no messages.
 */
export function callOutcome(r: CallResult, values: readonly JsonValue[] = []): CallOutcome {
  const outcome: CallOutcome = {
    headers: r.headers,
    trailers: r.trailers,
    messages: values,
    durationMs: r.durationMs,
  };
  if (r.code === undefined) {
    outcome.failure = r.error?.message ?? "the call failed";
    return outcome;
  }
  outcome.status = r.code;
  if (r.code !== "ok" && r.error) {
    outcome.error = { code: r.code, message: r.error.message, details: r.error.details.map(detail) };
  }
  return outcome;
}

/** A detail by its full type name (a type URL's prefix dropped), as JSON when it could be decoded. */
function detail(d: CallErrorDetail): OutcomeDetail {
  const type = d.type.slice(d.type.lastIndexOf("/") + 1);
  if (d.json !== undefined) {
    try {
      return { type, json: JSON.parse(d.json) as JsonValue };
    } catch {
      // Not JSON after all: keep the bytes.
    }
  }
  return { type, value: d.value };
}
