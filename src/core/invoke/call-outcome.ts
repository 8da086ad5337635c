// A call's result as the plain outcome that assertions and captures are checked against
// (core/assertions/outcome.ts). Every front end that checks requests (`protocall run`, the editor's
// response panel and tests) turns its call result into an outcome here, so `messages[0].count == 0`
// means the same everywhere: the messages are the values the pipeline hands to
// CallObserver.value (implicit fields at their defaults), not the printed JSON, which leaves them out.
import type { JsonValue } from "@bufbuild/protobuf";
import type { CallOutcome } from "../assertions/outcome";
import type { CallResult } from "./call-session";

/**
 * The outcome of a call made through the call session. `values` are the response messages as
 * CallObserver.value received them; without them (a request that reads no message), the printed
 * messages are parsed instead.
 */
export function callOutcome(r: CallResult, values?: readonly JsonValue[]): CallOutcome {
  const outcome: CallOutcome = {
    headers: r.headers,
    trailers: r.trailers,
    messages: values ?? r.messages.map((m) => JSON.parse(m) as JsonValue),
    durationMs: r.durationMs,
  };
  if (r.code === undefined) {
    outcome.failure = r.error?.message ?? "the call failed";
    return outcome;
  }
  outcome.status = r.code;
  if (r.code !== "ok" && r.error) {
    outcome.error = {
      code: r.code,
      message: r.error.message,
      details: r.error.details.map((d) =>
        d.json !== undefined
          ? { type: d.type, json: JSON.parse(d.json) as JsonValue }
          : { type: d.type, value: d.value },
      ),
    };
  }
  return outcome;
}
