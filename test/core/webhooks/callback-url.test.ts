import assert from "node:assert/strict";
import { test } from "node:test";
import { callbackUrlProblems } from "../../../src/core/webhooks/callback-url";

const path = "/buf.alpha.webhook.v1alpha1.EventService/Event";

test("a valid callback URL has no problems", () => {
  assert.deepEqual(callbackUrlProblems(`https://hooks.example.com${path}`, "buf"), []);
  assert.deepEqual(callbackUrlProblems(`https://127.0.0.1:8443/base${path}`, "buf"), []);
});

test("each callback URL rule has its own message", () => {
  const [http] = callbackUrlProblems(`http://hooks.example.com${path}`, "buf");
  assert.match(http, /must use the https scheme, not http/);
  const [query] = callbackUrlProblems(`https://hooks.example.com${path}?a=1`, "buf");
  assert.match(query, /must not have a query/);
  const [fragment] = callbackUrlProblems(`https://hooks.example.com${path}#x`, "buf");
  assert.match(fragment, /must not have a fragment/);
  const [wrongPath] = callbackUrlProblems("https://hooks.example.com/webhook", "buf");
  assert.match(
    wrongPath,
    /must end with the Event method's full path \/buf\.alpha\.webhook\.v1alpha1\.EventService\/Event/,
  );
  const [extra] = callbackUrlProblems(`https://hooks.example.com${path}/`, "buf");
  assert.match(extra, /must end with/);
  assert.match(callbackUrlProblems(`https://hooks.example.com${path} `, "buf").join(";"), /white space/);
  assert.match(callbackUrlProblems("not a url", "buf")[0], /not a valid URL/);
  assert.match(callbackUrlProblems("", "buf")[0], /empty/);
});

test("several problems are all reported", () => {
  const problems = callbackUrlProblems("http://x.example.com/hook?q#f", "buf");
  assert.equal(problems.length, 4);
});

test("the path follows the package prefix", () => {
  assert.deepEqual(
    callbackUrlProblems("https://x.example.com/acme.alpha.webhook.v1alpha1.EventService/Event", "acme"),
    [],
  );
  assert.equal(callbackUrlProblems(`https://x.example.com${path}`, "acme").length, 1);
});
