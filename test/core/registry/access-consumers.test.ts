// One registry access for every consumer: each command and front end that calls a registry runs, for
// every token form and trust rule of the shared table (test/support/token-forms.ts, checked against
// the real buf in token-buf.test.ts), against a registry stand-in on https that records the
// Authorization header it receives. Each must send the header the table says (or, for the webhook
// and registry commands, which need a token, refuse to call without one), and reach the registry
// exactly when the trust rule trusts its certificate.
//   CLI: protocall webhook list, protocall registry deliveries, protocall build REMOTE/owner/module
//   (the registry modules of curl, run and check); in process: registry modules as the language
//   server and the editor's Send open them (openSchema with the editor's sign-ins), the webhook
//   client and module client as the Webhooks view builds them, the local registry's push.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { remoteAccess } from "../../../src/core/registry/access";
import { ModuleClient } from "../../../src/core/registry/module-client";
import { provideRegistryModules } from "../../../src/core/registry/provide";
import { openSchema } from "../../../src/core/schema/open-schema";
import { createWebhookClient } from "../../../src/core/webhooks/client";
import { closePostConnections } from "../../../src/core/webhooks/http-post";
import { pushToRegistry } from "../../../src/core/webhooks/local-registry";
import { runCli } from "../../support/cli";
import { createTestPki, type TestPki } from "../../support/tls";
import {
  formSetup,
  type RecordingRegistry,
  startRecordingRegistry,
  tokenForms,
  trustEnv,
  trustForms,
} from "../../support/token-forms";

provideRegistryModules();

let pki: TestPki;
let registry: RecordingRegistry;

before(async () => {
  pki = await createTestPki(["localhost"]);
  registry = await startRecordingRegistry(pki);
});
after(async () => {
  closePostConnections();
  await registry?.close();
});

interface Outcome {
  /** The Authorization headers the registry received ("" for none); empty when nothing arrived. */
  headers: string[];
  /** What the consumer reported (stderr, or the error's message). */
  message: string;
}

interface Consumer {
  readonly name: string;
  /** Needs a token before it calls (the webhook and registry commands). */
  readonly needsToken: boolean;
  run(env: Record<string, string>, home: string): Promise<string>;
}

const clean = { PROTOCALL_TOKEN: undefined, BUF_TOKEN: undefined, NETRC: undefined };

function cli(name: string, args: () => string[], needsToken: boolean): Consumer {
  return {
    name,
    needsToken,
    async run(env, home) {
      const r = await runCli(args(), {
        env: {
          ...clean,
          SSL_CERT_FILE: undefined,
          SSL_CERT_DIR: undefined,
          NODE_EXTRA_CA_CERTS: undefined,
          HOME: home,
          XDG_CACHE_HOME: `${home}/.cache`,
          PROTOCALL_CACHE_DIR: `${home}/.cache/protocall`,
          ...env,
        },
        timeoutMs: 60_000,
      });
      return r.stderr;
    },
  };
}

/** An in-process consumer: its failure's message (every call here is refused by the stand-in). */
function inProcess(name: string, call: (env: NodeJS.ProcessEnv) => Promise<unknown>): Consumer {
  return {
    name,
    needsToken: false,
    async run(env, home) {
      try {
        await call({ HOME: home, ...env });
        return "";
      } catch (err) {
        return err instanceof Error ? err.message : String(err);
      }
    },
  };
}

const consumers: Consumer[] = [
  cli(
    "protocall webhook list",
    () => ["webhook", "list", "--remote", registry.remote, "--owner", "acme", "--repository", "x"],
    true,
  ),
  cli("protocall registry deliveries", () => ["registry", "deliveries", "--remote", registry.url], true),
  cli(
    "protocall build REMOTE/owner/module (registry modules of curl, run, check)",
    () => ["build", `${registry.remote}/acme/x`, "-o", "/dev/null"],
    false,
  ),
  inProcess("registry modules in the language server and the editor's Send (openSchema)", (env) =>
    openSchema(`${registry.remote}/acme/x`, {
      cwd: "/",
      stdin: process.stdin,
      env,
      registryCacheDir: false,
    }),
  ),
];

/** Runs a consumer and returns what reached the registry; one consumer at a time. */
async function outcome(consumer: Consumer, env: Record<string, string>, home: string): Promise<Outcome> {
  registry.take();
  const message = await consumer.run(env, home);
  return { headers: [...new Set(registry.take())], message };
}

describe("every consumer sends the token of each form", { concurrency: 1 }, () => {
  for (const form of tokenForms) {
    for (const consumer of consumers) {
      test(`${form.name}: ${consumer.name}`, async () => {
        const { home, env } = formSetup(form, registry.remote);
        const r = await outcome(consumer, { ...env, SSL_CERT_FILE: pki.ca.certPath }, home);
        if (form.error) {
          assert.deepEqual(r.headers, [], "nothing is sent");
          assert.match(r.message, form.error);
        } else if (form.token === undefined && consumer.needsToken) {
          assert.deepEqual(r.headers, [], "nothing is sent");
          assert.match(r.message, /no API token for localhost:\d+: set PROTOCALL_TOKEN/);
        } else {
          assert.deepEqual(r.headers, [form.token === undefined ? "" : `Bearer ${form.token}`], r.message);
        }
      });
    }
  }
});

describe("every consumer trusts the registry by the one rule", { concurrency: 1 }, () => {
  for (const form of trustForms) {
    for (const consumer of consumers) {
      test(`${form.name}: ${consumer.name}`, async () => {
        const { home } = formSetup({ name: "", env: {} }, registry.remote);
        const r = await outcome(consumer, { ...trustEnv(form, pki), BUF_TOKEN: "tok" }, home);
        if (form.trusted) {
          assert.deepEqual(r.headers, ["Bearer tok"], r.message);
        } else {
          assert.deepEqual(r.headers, [], "the registry is not reached");
          assert.match(r.message, /certificate|x509/i);
        }
      });
    }
  }
});

describe("the editor's sign-ins", { concurrency: 1 }, () => {
  // The Webhooks view builds its clients from the sign-in (token and CA) through remoteAccess, as
  // the local registry's push does; registry modules get the sign-ins with the settings.
  const signedIn = (env: NodeJS.ProcessEnv = {}) =>
    remoteAccess(registry.remote, {
      env,
      tokens: { [registry.remote]: "editor-token" },
      cas: { [registry.remote]: pki.ca.cert },
    });
  const editorConsumers: [string, () => Promise<unknown>][] = [
    [
      "webhook client (Webhooks view)",
      () => createWebhookClient({ baseUrl: registry.url, access: signedIn() }).listWebhooks("acme", "x"),
    ],
    [
      "module client (Webhooks view history)",
      () => new ModuleClient({ access: signedIn(), baseUrl: registry.url }).listCommits("acme", "x"),
    ],
    [
      "local registry push",
      () =>
        pushToRegistry(
          registry.url,
          "editor-token",
          { owner: "acme", repository: "x" },
          { ca: pki.ca.cert, env: {} },
        ),
    ],
    [
      "registry modules with the sign-ins (language server, Send)",
      () =>
        openSchema(`${registry.remote}/acme/x`, {
          cwd: "/",
          stdin: process.stdin,
          env: { BUF_TOKEN: "env-token", HOME: "/nonexistent" },
          registryTokens: { [registry.remote]: "editor-token" },
          registryCas: { [registry.remote]: pki.ca.cert },
          registryCacheDir: false,
        }),
    ],
  ];
  for (const [name, call] of editorConsumers) {
    test(`the signed-in token before the environment's, the sign-in's CA trusted: ${name}`, async () => {
      registry.take();
      await assert.rejects(call());
      assert.deepEqual([...new Set(registry.take())], ["Bearer editor-token"]);
    });
  }
});

describe("-k", { concurrency: 1 }, () => {
  const list = () => ["webhook", "list", "--remote", registry.remote, "--owner", "acme", "--repository", "x"];
  for (const [name, args] of [
    ["protocall webhook list -k", () => [...list(), "-k"]],
    ["protocall webhook list --insecure", () => [...list(), "--insecure"]],
  ] as const) {
    test(`${name} reaches a registry whose certificate nothing trusts`, async () => {
      const { home } = formSetup({ name: "", env: {} }, registry.remote);
      const r = await outcome(cli(name, args, true), { BUF_TOKEN: "tok" }, home);
      assert.deepEqual(r.headers, ["Bearer tok"], r.message);
    });
  }
});
