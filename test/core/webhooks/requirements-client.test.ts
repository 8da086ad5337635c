// The registry client's wire form and typed errors, against a registry stand-in on loopback that records
// exactly what it receives and answers what each case needs.
import assert from "node:assert/strict";
import http from "node:http";
import { after, before, test } from "node:test";
import { callbackUrlProblems } from "../../../src/core/webhooks/callback-url";
import { createWebhookClient } from "../../../src/core/webhooks/client";
import { WebhookError } from "../../../src/core/webhooks/errors";
import { closePostConnections } from "../../../src/core/webhooks/http-post";
import { accessFor } from "../../support/registry-access";

interface Seen {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
}

const seen: Seen[] = [];
/** What the stand-in answers next: status and body (JSON text). */
let answer: { status: number; body: string } = { status: 200, body: "{}" };
let server: http.Server;
let base = "";
const path = "/buf.alpha.webhook.v1alpha1.EventService/Event";
const callback = `https://hooks.example.com${path}`;

before(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      seen.push({
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        body: JSON.parse(Buffer.concat(chunks).toString() || "{}") as Record<string, unknown>,
      });
      res.writeHead(answer.status, { "content-type": "application/json" });
      res.end(answer.body);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});

after(async () => {
  closePostConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

const client = () =>
  createWebhookClient({ baseUrl: base, access: accessFor(base, "secret-token"), remoteLabel: "reg.example" });

test("create and delete: POST, application/json, bearer token, snake_case request keys", async () => {
  // The response spelled in snake_case keys: the client reads it as well as camelCase.
  answer = {
    status: 200,
    body: JSON.stringify({
      webhook: {
        event: "WEBHOOK_EVENT_REPOSITORY_PUSH",
        webhook_id: "w-1",
        create_time: "2024-05-01T10:00:00Z",
        update_time: "2024-05-01T10:00:00Z",
        repository_name: "petapis",
        owner_name: "acme",
        callback_url: callback,
      },
    }),
  };
  seen.length = 0;
  const webhook = await client().createWebhook({
    owner: "acme",
    repository: "petapis",
    callbackUrl: callback,
  });
  assert.equal(webhook.webhookId, "w-1");
  assert.equal(webhook.callbackUrl, callback);
  assert.equal(webhook.ownerName, "acme");
  assert.equal(webhook.createTime?.seconds, BigInt(Date.UTC(2024, 4, 1, 10) / 1000));
  answer = { status: 200, body: "{}" };
  await client().deleteWebhook("w-1");
  assert.equal(seen.length, 2);
  const [create, del] = seen;
  for (const s of seen) {
    assert.equal(s.method, "POST");
    assert.match(String(s.headers["content-type"]), /^application\/json/);
    assert.equal(s.headers.authorization, "Bearer secret-token");
  }
  assert.equal(create.path, "/buf.alpha.registry.v1alpha1.WebhookService/CreateWebhook");
  assert.deepEqual(create.body, {
    webhook_event: "WEBHOOK_EVENT_REPOSITORY_PUSH",
    owner_name: "acme",
    repository_name: "petapis",
    callback_url: callback,
  });
  assert.equal(del.path, "/buf.alpha.registry.v1alpha1.WebhookService/DeleteWebhook");
  assert.deepEqual(del.body, { webhook_id: "w-1" });
});

test("a callback URL breaking a rule is refused before anything is sent", async () => {
  seen.length = 0;
  await assert.rejects(
    client().createWebhook({
      owner: "acme",
      repository: "petapis",
      callbackUrl: `http://h.example.com${path}`,
    }),
    (err: unknown) => {
      assert.ok(err instanceof WebhookError);
      assert.equal(err.kind, "invalid_argument");
      assert.equal(err.exitCode, 1);
      assert.match(err.message, /must use the https scheme/);
      return true;
    },
  );
  assert.equal(seen.length, 0);
});

test("callback URL: user info and trailing characters are each named", () => {
  const [userInfo] = callbackUrlProblems(`https://me:pw@hooks.example.com${path}`, "buf");
  assert.match(userInfo, /has extra characters \(user info before "@"\)/);
  const [trailing] = callbackUrlProblems(`https://hooks.example.com${path}x`, "buf");
  assert.match(trailing, /must end with the Event method's full path/);
  const [prefixed] = callbackUrlProblems(
    "https://hooks.example.com/xbuf.alpha.webhook.v1alpha1.EventService/Event",
    "buf",
  );
  assert.match(prefixed, /must end with the Event method's full path/);
});

/** Each refusal of the registry becomes a typed error whose message says what to do. */
const refusals: { name: string; status: number; code: string; kind: string; message: RegExp }[] = [
  {
    name: "unauthenticated",
    status: 401,
    code: "unauthenticated",
    kind: "unauthenticated",
    message: /did not accept the token.*PROTOCALL_TOKEN, BUF_TOKEN.*"machine 127\.0\.0\.1:\d+"/,
  },
  {
    name: "permission denied",
    status: 403,
    code: "permission_denied",
    kind: "permission_denied",
    message: /needs the Admin role on acme\/petapis; ask an Admin/,
  },
  {
    name: "already exists",
    status: 409,
    code: "already_exists",
    kind: "already_exists",
    message: /acme\/petapis already has a webhook.*delete the existing one first.*--remote reg\.example/,
  },
  {
    name: "invalid argument",
    status: 400,
    code: "invalid_argument",
    kind: "invalid_argument",
    message: /the registry rejected the ListWebhooks request: bad owner name; check --owner and --repository/,
  },
  {
    name: "not found",
    status: 404,
    code: "not_found",
    kind: "not_found",
    message: /not found .*check --owner and --repository/,
  },
  {
    name: "webhooks disabled",
    status: 400,
    code: "failed_precondition",
    kind: "webhooks_disabled",
    message:
      /webhooks are disabled on the registry at 127\.0\.0\.1:\d+.*ask your registry admin to enable them/,
  },
];

for (const r of refusals) {
  test(`a registry refusal, ${r.name}: typed error, exit code = Connect code x 8, actionable message`, async () => {
    answer = {
      status: r.status,
      body: JSON.stringify({
        code: r.code,
        message:
          r.kind === "webhooks_disabled"
            ? "webhooks are disabled"
            : r.kind === "invalid_argument"
              ? "bad owner name"
              : "no",
      }),
    };
    await assert.rejects(client().listWebhooks("acme", "petapis"), (err: unknown) => {
      assert.ok(err instanceof WebhookError, String(err));
      assert.equal(err.kind, r.kind);
      assert.equal(err.exitCode, err.code * 8);
      assert.match(err.message, r.message);
      return true;
    });
  });
}

test("a registry without the WebhookService (HTTP 404, no Connect body) reads as webhooks disabled", async () => {
  answer = { status: 404, body: "" };
  await assert.rejects(client().listWebhooks("acme", "petapis"), (err: unknown) => {
    assert.ok(err instanceof WebhookError);
    assert.equal(err.kind, "webhooks_disabled");
    assert.match(
      err.message,
      /ask your registry admin to enable them, or check that --remote points at the registry/,
    );
    return true;
  });
});

test("a page token repeated by the registry stops the listing instead of looping", async () => {
  answer = { status: 200, body: JSON.stringify({ webhooks: [], next_page_token: "same" }) };
  seen.length = 0;
  await assert.rejects(client().listWebhooks("acme", "petapis"), /page token "same" twice/);
  assert.equal(seen.length, 2);
});

test("only a message about webhooks makes an error 'webhooks disabled'", async () => {
  answer = { status: 401, body: JSON.stringify({ code: "unauthenticated", message: "account disabled" }) };
  await assert.rejects(client().listWebhooks("acme", "petapis"), (err: unknown) => {
    assert.ok(err instanceof WebhookError);
    assert.equal(err.kind, "unauthenticated");
    return true;
  });
  answer = {
    status: 400,
    body: JSON.stringify({
      code: "failed_precondition",
      message: "Webhooks are not enabled on this instance",
    }),
  };
  await assert.rejects(client().listWebhooks("acme", "petapis"), (err: unknown) => {
    assert.ok(err instanceof WebhookError);
    assert.equal(err.kind, "webhooks_disabled");
    assert.match(err.message, /ask your registry admin to enable them/);
    return true;
  });
});

test("callback URL: a URL without a host is refused with its own message", () => {
  for (const url of [`https:///buf.alpha.webhook.v1alpha1.EventService/Event`, `https:${path}`]) {
    const problems = callbackUrlProblems(url, "buf");
    assert.equal(problems.length, 1, `${url}: ${problems.join("; ")}`);
    assert.match(problems[0], /has no host: write it as https:\/\/HOST\/buf\.alpha/);
  }
});
