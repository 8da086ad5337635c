// Turns the result of a call made through the call session (call-session.ts, the editor's Send and
// Test Explorer) into the CallOutcome that assertions are checked against (outcome.ts). The session's
// messages are formatted as `protocall curl` prints them; assertions read them with every default
// value included, which the session hands out per message (CallObserver.message's `withDefaults`).
import type { JsonValue } from "@bufbuild/protobuf";
import type { CallErrorDetail, CallResult } from "../invoke/call-session";
import type { CallOutcome, OutcomeDetail } from "./outcome";

/**
 * The outcome of a call. `messages` are the response messages as JSON text with default values
 * (from `withDefaults`); without them, the result's formatted messages are used.
 */
export function outcomeFromCallResult(result: CallResult, messages?: readonly string[]): CallOutcome {
  const texts = messages ?? result.messages;
  const outcome: CallOutcome = {
    status: result.code,
    headers: result.headers,
    trailers: result.trailers,
    messages: texts.map(parseMessage),
    durationMs: result.durationMs,
  };
  if (result.error) {
    if (result.code === undefined) {
      outcome.failure = result.error.message;
    } else {
      outcome.error = {
        code: result.code,
        message: result.error.message,
        details: result.error.details.map(detail),
      };
    }
  }
  return outcome;
}

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

/** Formatted proto JSON is JSON (64-bit integers are strings, NaN and Infinity are strings). */
function parseMessage(text: string): JsonValue {
  return JSON.parse(text) as JsonValue;
}
