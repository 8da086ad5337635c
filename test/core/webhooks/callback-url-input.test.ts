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

test("every broken rule has its own line, with editor advice instead of command-line flags", () => {
  const problems = callbackUrlInputProblems("http://127.0.0.1:8443/hook?x=1#f");
  assert.equal(problems.length, 4);
  assert.match(problems[0], /https scheme.*the setting protocall\.listener\.tls/);
  assert.ok(!problems.some((p) => p.includes("protocall listen")));
  assert.match(problems[1], /query/);
  assert.match(problems[2], /fragment/);
  assert.match(problems[3], /EventService\/Event/);
  assert.equal(callbackUrlInputMessage("http://127.0.0.1:8443/hook?x=1#f"), problems.join("\n"));
  assert.match(callbackUrlInputMessage("")!, /empty/);
  assert.match(callbackUrlInputMessage(`${good}/extra`)!, /must end with/);
});
