import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { createWebhookClient } from "../../../src/core/webhooks/client";
import { defaultRegistryConfig } from "../../../src/core/webhooks/emulator/config";
import { type RegistryEmulator, startRegistryEmulator } from "../../../src/core/webhooks/emulator/server";
import { webhookErrorAdvice } from "../../../src/core/webhooks/error-advice";
import { WebhookError } from "../../../src/core/webhooks/errors";
import { closePostConnections } from "../../../src/core/webhooks/http-post";
import { accessFor } from "../../support/registry-access";

// Real errors from the real client against the real emulator, turned into editor advice.
let emulator: RegistryEmulator;
let disabled: RegistryEmulator;
const callbackUrl = "https://127.0.0.1:9/buf.alpha.webhook.v1alpha1.EventService/Event";

before(async () => {
  emulator = await startRegistryEmulator({ config: defaultRegistryConfig });
  disabled = await startRegistryEmulator({ config: defaultRegistryConfig, webhooksEnabled: false });
});

after(async () => {
  await emulator.close();
  await disabled.close();
  closePostConnections();
});

async function failure(call: () => Promise<unknown>): Promise<WebhookError> {
  try {
    await call();
  } catch (err) {
    assert.ok(err instanceof WebhookError, String(err));
    return err;
  }
  assert.fail("the call succeeded");
}

const client = (token: string, baseUrl = emulator.url) =>
  createWebhookClient({ baseUrl, access: accessFor(baseUrl, token) });
const noFlags = (message: string) => assert.ok(!/--|PROTOCALL_TOKEN|netrc/.test(message), message);

test("unauthenticated: sign in again, with the Sign In action", async () => {
  const err = await failure(() => client("wrong").listWebhooks("acme", "petapis"));
  const advice = webhookErrorAdvice(err, { registry: "Local registry" });
  assert.equal(advice.fix, "signIn");
  assert.match(advice.message, /did not accept the token \(invalid token\): sign in to Local registry again/);
  noFlags(advice.message);
});

test("permission denied names the Admin role; already exists says to delete the listed one first", async () => {
  const denied = webhookErrorAdvice(
    await failure(() =>
      client("bob-token").createWebhook({ owner: "acme", repository: "petapis", callbackUrl }),
    ),
    { registry: "r" },
  );
  assert.match(
    denied.message,
    /user bob does not have the Admin role.*needs the Admin role on acme\/petapis/,
  );
  assert.equal(denied.fix, undefined);
  const hook = await client("alice-token").createWebhook({
    owner: "acme",
    repository: "petapis",
    callbackUrl,
  });
  try {
    const exists = webhookErrorAdvice(
      await failure(() =>
        client("alice-token").createWebhook({ owner: "acme", repository: "petapis", callbackUrl }),
      ),
      { registry: "r" },
    );
    assert.match(
      exists.message,
      /acme\/petapis already has a webhook for this event.*delete the webhook listed under it first/,
    );
    noFlags(exists.message);
  } finally {
    await client("alice-token").deleteWebhook(hook.webhookId);
  }
});

test("not found: a missing repository and a deleted webhook each say what to do in the view", async () => {
  const repo = webhookErrorAdvice(await failure(() => client("alice-token").listWebhooks("acme", "nope")), {
    registry: "r",
  });
  assert.match(
    repo.message,
    /repository acme\/nope does not exist.*remove it from the view and add it with the right name/,
  );
  noFlags(repo.message);
  const hook = webhookErrorAdvice(await failure(() => client("alice-token").deleteWebhook("gone")), {
    registry: "r",
  });
  assert.match(hook.message, /webhook "gone" not found.*it was deleted already; refresh the view/);
});

test("invalid argument: the registry's reason, then what to check in the editor", async () => {
  const err = await failure(() =>
    createWebhookClient({
      baseUrl: emulator.url,
      access: accessFor(emulator.url, "alice-token"),
    }).listWebhooks("", "petapis"),
  );
  const advice = webhookErrorAdvice(err, { registry: "r" });
  assert.match(advice.message, /owner_name and repository_name are required; check the repository name/);
  noFlags(advice.message);
});

test("webhooks disabled: ask the registry admin; a registry from the settings also offers Open Settings", async () => {
  const err = await failure(() => client("alice-token", disabled.url).listWebhooks("acme", "petapis"));
  const advice = webhookErrorAdvice(err, { registry: "r", fromSettings: true });
  assert.match(advice.message, /webhooks are disabled.*ask your registry admin to enable them/);
  assert.equal(advice.fix, "openSettings");
  assert.equal(webhookErrorAdvice(err, { registry: "r" }).fix, undefined);
});

test("unreachable: check the URL (in the settings when it comes from there) and the network", async () => {
  const err = await failure(() => client("t", "http://127.0.0.1:9").listWebhooks("acme", "petapis"));
  const advice = webhookErrorAdvice(err, { registry: "r", fromSettings: true });
  assert.match(
    advice.message,
    /cannot reach the registry at http:\/\/127\.0\.0\.1:9\/.*check the registry's URL in the settings and your network/,
  );
  assert.equal(advice.fix, "openSettings");
  noFlags(advice.message);
  assert.deepEqual(webhookErrorAdvice(new Error("plain"), { registry: "r" }), { message: "plain" });
});
