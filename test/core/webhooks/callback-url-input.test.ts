import assert from "node:assert/strict";
import { test } from "node:test";
import {
  callbackUrlInputMessage,
  callbackUrlInputProblems,
} from "../../../src/core/webhooks/callback-url-input";

const good = "https://127.0.0.1:8443/buf.alpha.webhook.v1alpha1.EventService/Event";

test("a valid callback URL has no message", () => {
  assert.equal(callbackUrlInputMessage(good), undefined);
});

test("every broken rule has its own bullet, with editor advice instead of command-line flags", () => {
  const bad = 'http://127.0.0.1:8443/h"ook?x=1#f';
  const problems = callbackUrlInputProblems(bad);
  assert.deepEqual(problems, [
    "The URL must use the https scheme, not http: serve the listener over TLS (the setting protocall.listener.tls, on by default)",
    'The URL must not have a query: remove the part from "?"',
    'The URL must not have a fragment: remove the part from "#"',
    "The URL must end with the Event method's full path /buf.alpha.webhook.v1alpha1.EventService/Event",
  ]);
  assert.equal(callbackUrlInputMessage(bad), problems.map((p) => `• ${p}`).join("\n"));
  assert.match(callbackUrlInputMessage("")!, /^• The URL is empty/);
  assert.match(callbackUrlInputMessage("nope")!, /^• The URL is not a valid URL/);
  assert.match(callbackUrlInputMessage(`${good}/extra`)!, /^• The URL must end with/);
  assert.match(callbackUrlInputMessage(`${good} `)!, /white space/);
});
