// The Webhooks view inside the real extension host, through the API activate() returns (the same code
// the view's commands run after their prompts) and the view's own tree provider: the local registry
// (the real emulator over real https), registries added by domain or URL, tokens in secret storage,
// repositories, create (Admin ok, non-Admin denied, a second one rejected, a bad callback URL rejected
// by the input box's check), list, delete, errors as nodes with their fix, inert hostile names, and a
// push delivered over verified https to the listener.
import assert from "node:assert/strict";
import * as vscode from "vscode";
import { defaultRegistryConfig } from "../../../src/core/registry-emulator/config";
import { startRegistryEmulator } from "../../../src/core/registry-emulator/server";
import type { DeliveriesApi } from "../../../src/extension/deliveries/api";
import type { WebhooksApi, WebhooksTreeSnapshot } from "../../../src/extension/webhooks/api";
import { createTestPki } from "../../support/tls";
import type { VscodeTest } from "../harness";
import { pushWithBuf } from "../module-push";

const petFile = (version: number) => ({
  "pet/v1/pet.proto": `syntax = "proto3";\n\npackage pet.v1;\n\nmessage Pet${version} {}\n`,
});

const hostile = "<img src=x onerror=alert(1)>";
const unusedCallback = "https://127.0.0.1:9/buf.alpha.webhook.v1alpha1.EventService/Event";

async function apis(): Promise<{ webhooks: WebhooksApi; deliveries: DeliveriesApi }> {
  const ext = vscode.extensions.getExtension("protocall.protocall");
  assert.ok(ext, "the Protocall extension is installed");
  return (await ext.activate()) as { webhooks: WebhooksApi; deliveries: DeliveriesApi };
}

async function webhooks(): Promise<WebhooksApi> {
  return (await apis()).webhooks;
}

function find(nodes: readonly WebhooksTreeSnapshot[] | undefined, label: string): WebhooksTreeSnapshot {
  const node = nodes?.find((n) => n.label === label);
  assert.ok(node, `"${label}" in ${JSON.stringify(nodes?.map((n) => n.label))}`);
  return node;
}

/** The children of repository `repo` under registry `registry`, as the view draws them. */
async function repositoryChildren(
  api: WebhooksApi,
  registry: string,
  repo: string,
): Promise<readonly WebhooksTreeSnapshot[]> {
  const tree = await api.snapshot();
  return find(find(tree, registry).children, repo).children ?? [];
}

async function rejectsWith(promise: Promise<unknown>, pattern: RegExp): Promise<string> {
  try {
    await promise;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    assert.match(message, pattern);
    return message;
  }
  assert.fail(`expected a failure matching ${pattern}`);
}

async function waitFor<T>(what: string, check: () => T | undefined | Promise<T | undefined>, ms = 20_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const local = "Local registry";
const repo = "acme/petapis";

export const tests: VscodeTest[] = [
  {
    name: "the local registry starts over https, signed in, with its repository",
    timeoutMs: 30_000,
    async run() {
      const api = await webhooks();
      const info = await api.startLocalRegistry();
      assert.match(info.url, /^https:\/\/127\.0\.0\.1:\d+$/);
      assert.equal(info.user, "alice");
      assert.deepEqual(info.repositories, [repo]);
      assert.equal(api.localRegistryRunningContext(), true);
      // Started twice: the same one.
      assert.equal((await api.startLocalRegistry()).url, info.url);
      const tree = await api.snapshot();
      const registry = find(tree, local);
      assert.equal(registry.contextValue, "registry-signedIn");
      assert.equal(registry.description, info.url);
      const repository = find(registry.children, repo);
      assert.equal(repository.contextValue, "repository");
      assert.deepEqual(
        repository.children?.map((c) => c.label),
        ["No webhooks: create one"],
      );
    },
  },
  {
    name: "create as an Admin: listed with its event, id, callback URL and times",
    timeoutMs: 30_000,
    async run() {
      const api = await webhooks();
      const created = await api.createWebhook(local, repo, unusedCallback);
      assert.equal(created.event, "WEBHOOK_EVENT_REPOSITORY_PUSH");
      assert.equal(created.callbackUrl, unusedCallback);
      assert.match(created.id, /^[0-9a-f-]{36}$/);
      assert.deepEqual(
        (await api.listWebhooks(local, repo)).map((w) => w.id),
        [created.id],
      );
      const [node] = await repositoryChildren(api, local, repo);
      assert.equal(node.label, "WEBHOOK_EVENT_REPOSITORY_PUSH");
      assert.equal(node.description, created.id);
      assert.equal(node.contextValue, "webhook");
      assert.ok(node.tooltip?.includes(`Callback URL: ${unusedCallback}`), node.tooltip);
      assert.ok(node.tooltip?.includes(`Created: ${created.createTime}`), node.tooltip);
      assert.ok(node.tooltip?.includes(`Updated: ${created.updateTime}`), node.tooltip);

      // The inline copy actions, run on the view's own node.
      const registryNode = (await api.tree.getChildren())?.find(
        (n) => n.kind === "registry" && n.registry.name === local,
      );
      const repoNode = (await api.tree.getChildren(registryNode))?.find((n) => n.kind === "repository");
      const hookNode = (await api.tree.getChildren(repoNode))?.find((n) => n.kind === "webhook");
      assert.ok(hookNode, "the webhook's node");
      assert.equal(await vscode.commands.executeCommand("protocall.webhooks.copyId", hookNode), created.id);
      assert.equal(
        await vscode.commands.executeCommand("protocall.webhooks.copyCallbackUrl", hookNode),
        unusedCallback,
      );
    },
  },
  {
    name: "a second webhook for the same repository is rejected, with what to do",
    async run() {
      const api = await webhooks();
      await rejectsWith(
        api.createWebhook(local, repo, unusedCallback),
        /acme\/petapis already has a webhook for this event.*delete the webhook listed under it first/,
      );
      assert.equal((await api.listWebhooks(local, repo)).length, 1);
    },
  },
  {
    name: "a bad callback URL is rejected by the input box's check, each rule with its message",
    async run() {
      const api = await webhooks();
      const message = api.validateCallbackUrl("http://127.0.0.1:9/hook?x=1");
      assert.ok(message);
      const lines = message.split("\n");
      assert.equal(lines.length, 3, message);
      assert.match(lines[0], /^• The URL must use the https scheme/);
      assert.match(lines[1], /^• The URL must not have a query/);
      assert.match(lines[2], /^• The URL must end with .*EventService\/Event/);
      assert.equal(api.validateCallbackUrl(unusedCallback), undefined);
      await rejectsWith(
        api.createWebhook(local, repo, "http://127.0.0.1:9/hook"),
        /must use the https scheme/,
      );
    },
  },
  {
    name: "signed in as a non-Admin: create is denied and the listing shows why, as an error node",
    timeoutMs: 30_000,
    async run() {
      const api = await webhooks();
      await api.signIn(local, "bob-token");
      try {
        await rejectsWith(
          api.createWebhook(local, repo, unusedCallback),
          /user bob does not have the Admin role.*needs the Admin role on acme\/petapis/,
        );
        const [error] = await repositoryChildren(api, local, repo);
        assert.equal(error.contextValue, "webhooks-error");
        assert.match(error.label, /needs the Admin role on acme\/petapis; ask an Admin/);
      } finally {
        await api.signIn(local, "alice-token");
      }
    },
  },
  {
    name: "a token the registry refuses: an error node whose click signs in",
    async run() {
      const api = await webhooks();
      await api.signIn(local, "wrong-token");
      try {
        const [error] = await repositoryChildren(api, local, repo);
        assert.equal(error.contextValue, "webhooks-error");
        assert.equal(error.command, "protocall.webhooks.signIn");
        assert.match(
          error.label,
          /did not accept the token \(invalid token\): sign in to Local registry again/,
        );
      } finally {
        await api.signIn(local, "alice-token");
      }
      await api.signOut(local);
      const registry = find(await api.snapshot(), local);
      assert.equal(registry.contextValue, "registry");
      const [message] = find(registry.children, repo).children ?? [];
      assert.equal(message.label, "Sign in to Local registry to list the webhooks");
      assert.equal(message.command, "protocall.webhooks.signIn");
      await api.signIn(local, "alice-token");
      assert.equal(find(await api.snapshot(), local).contextValue, "registry-signedIn");
    },
  },
  {
    name: "registries added by domain or URL, signed in and out; an unreachable one shows the fix",
    timeoutMs: 40_000,
    async run() {
      const api = await webhooks();
      const example = await api.addRegistry("Example", "buf.example.com");
      assert.equal(example.url, "https://buf.example.com");
      const nowhere = await api.addRegistry("Nowhere", "http://127.0.0.1:9/");
      assert.equal(nowhere.url, "http://127.0.0.1:9");
      try {
        await rejectsWith(
          api.addRegistry("Again", "https://buf.example.com/"),
          /already in the Webhooks view as "Example"/,
        );
        await rejectsWith(api.addRegistry("Bad", "ftp://x"), /uses ftp/);
        let node = find(await api.snapshot(), "Example");
        assert.equal(node.contextValue, "registry");
        assert.match(node.description ?? "", /signed out/);
        assert.deepEqual(
          node.children?.map((c) => [c.label, c.command]),
          [["Add a repository (owner/repository) to see its webhooks", "protocall.webhooks.addRepository"]],
        );
        await api.signIn("https://buf.example.com", "token-1");
        node = find(await api.snapshot(), "Example");
        assert.equal(node.contextValue, "registry-signedIn");
        await api.signOut("Example");
        assert.equal(find(await api.snapshot(), "Example").contextValue, "registry");

        await api.signIn("Nowhere", "t");
        await api.addRepository("Nowhere", " acme / petapis ");
        const [error] = await repositoryChildren(api, "Nowhere", repo);
        assert.equal(error.contextValue, "webhooks-error");
        assert.match(
          error.label,
          /cannot reach the registry at http:\/\/127\.0\.0\.1:9\/.*check the registry's URL and your network/,
        );
        await rejectsWith(api.addRepository("Nowhere", "petapis"), /owner\/repository with one "\/"/);
      } finally {
        await api.removeRegistry("Example");
        await api.removeRegistry("Nowhere");
      }
      assert.deepEqual(
        api.registries().map((r) => r.name),
        [local],
      );
    },
  },
  {
    name: "registries from the protocall.registries setting; a bad entry is an error node that opens the settings",
    timeoutMs: 30_000,
    async run() {
      const api = await webhooks();
      const config = vscode.workspace.getConfiguration("protocall");
      await config.update(
        "registries",
        [{ name: "Team registry", url: "buf.team.example" }, { url: "ftp://nope" }, { name: "no url" }],
        vscode.ConfigurationTarget.Global,
      );
      try {
        const tree = await waitFor("the setting's registries", async () => {
          const t = await api.snapshot();
          return t.some((n) => n.label === "Team registry") ? t : undefined;
        });
        const team = find(tree, "Team registry");
        assert.match(
          team.tooltip ?? "",
          /https:\/\/buf\.team\.example\nNot signed in\nFrom the setting protocall\.registries/,
        );
        const problems = tree.filter((n) => n.contextValue === "webhooks-error");
        assert.deepEqual(
          problems.map((p) => [p.label, p.command]),
          [
            [
              'Setting protocall.registries[1]: "ftp://nope" uses ftp: a registry is reached over https (or http for a local one)',
              "workbench.action.openSettings",
            ],
            [
              'Setting protocall.registries[2] needs a "url" string, e.g. { "name": "buf.build", "url": "https://buf.build" }',
              "workbench.action.openSettings",
            ],
          ],
        );
        await rejectsWith(
          api.removeRegistry("Team registry"),
          /comes from the setting protocall\.registries: remove it there/,
        );
      } finally {
        await config.update("registries", undefined, vscode.ConfigurationTarget.Global);
      }
      await waitFor("the setting's registries gone", async () =>
        (await api.snapshot()).some((n) => n.label === "Team registry") ? undefined : true,
      );
    },
  },
  {
    name: "a registry from the settings with webhooks disabled: the error node says to ask its admin and opens the settings",
    timeoutMs: 30_000,
    async run() {
      const api = await webhooks();
      // A second emulator, over http on loopback (a full URL is accepted), with webhooks switched off.
      const disabled = await startRegistryEmulator({ config: defaultRegistryConfig, webhooksEnabled: false });
      const config = vscode.workspace.getConfiguration("protocall");
      try {
        await config.update(
          "registries",
          [{ name: "Private", url: disabled.url }],
          vscode.ConfigurationTarget.Global,
        );
        await waitFor("the Private registry", async () =>
          (await api.snapshot()).some((n) => n.label === "Private") ? true : undefined,
        );
        await api.signIn("Private", "alice-token");
        await api.addRepository("Private", repo);
        const [error] = await repositoryChildren(api, "Private", repo);
        assert.equal(error.contextValue, "webhooks-error");
        assert.equal(error.command, "workbench.action.openSettings");
        assert.match(
          error.label,
          /webhooks are disabled on the registry at 127\.0\.0\.1:\d+ \(webhooks are disabled on this instance\): ask your registry admin to enable them, or check the registry's URL in the settings/,
        );
        await rejectsWith(
          api.createWebhook("Private", repo, unusedCallback),
          /ask your registry admin to enable them/,
        );
        await api.signOut("Private");
        await api.removeRepository("Private", repo);
      } finally {
        await config.update("registries", undefined, vscode.ConfigurationTarget.Global);
        await disabled.close();
      }
    },
  },
  {
    name: "a private registry over https with its own CA: trusted through the setting's caFile, refused otherwise",
    timeoutMs: 40_000,
    async run() {
      const api = await webhooks();
      const pki = await createTestPki();
      const registry = await startRegistryEmulator({
        config: defaultRegistryConfig,
        tls: { cert: pki.server.cert, key: pki.server.key },
      });
      const config = vscode.workspace.getConfiguration("protocall");
      const configure = async (caFile: string | undefined) => {
        await config.update(
          "registries",
          [{ name: "Private", url: registry.url, ...(caFile ? { caFile } : {}) }],
          vscode.ConfigurationTarget.Global,
        );
        await waitFor("the setting applied", async () => {
          const entry = api.registries().find((r) => r.name === "Private");
          return entry && entry.caFile === caFile ? true : undefined;
        });
      };
      try {
        assert.match(registry.url, /^https:\/\/127\.0\.0\.1:\d+$/);
        await configure(pki.ca.certPath);
        await api.signIn("Private", "alice-token");
        await api.addRepository("Private", repo);
        const created = await api.createWebhook("Private", repo, unusedCallback);
        assert.deepEqual(
          (await repositoryChildren(api, "Private", repo)).map((c) => [c.label, c.description]),
          [["WEBHOOK_EVENT_REPOSITORY_PUSH", created.id]],
        );
        // Another CA, or none: the registry's certificate is not trusted, and the node says so.
        for (const caFile of [pki.otherCa.certPath, undefined]) {
          await configure(caFile);
          const [error] = await repositoryChildren(api, "Private", repo);
          assert.equal(error.contextValue, "webhooks-error");
          assert.match(
            error.label,
            /cannot reach the registry at https:\/\/127\.0\.0\.1:\d+\/.*certificate/i,
          );
          assert.equal(error.command, "workbench.action.openSettings");
        }
        await configure(`${pki.dir}/missing.pem`);
        const [missing] = await repositoryChildren(api, "Private", repo);
        assert.match(
          missing.label,
          /cannot read the caFile of "Private" \(.*missing\.pem\).*fix its path in the setting protocall\.registries/,
        );
        await configure(pki.ca.certPath);
        await api.deleteWebhook("Private", created.id);
        await api.signOut("Private");
        await api.removeRepository("Private", repo);
      } finally {
        await config.update("registries", undefined, vscode.ConfigurationTarget.Global);
        await registry.close();
      }
    },
  },
  {
    name: "a repository that is a module: its recent commits (labels, author, time) and its labels, after buf pushes",
    timeoutMs: 90_000,
    async run() {
      const api = await webhooks();
      const pki = await createTestPki(["localhost"]);
      const registry = await startRegistryEmulator({
        config: defaultRegistryConfig,
        tls: { cert: pki.server.cert, key: pki.server.key },
      });
      const remote = `localhost:${registry.port}`;
      const config = vscode.workspace.getConfiguration("protocall");
      try {
        await config.update(
          "registries",
          [{ name: "Modules", url: registry.url, caFile: pki.ca.certPath }],
          vscode.ConfigurationTarget.Global,
        );
        await waitFor("the setting applied", async () =>
          api.registries().some((r) => r.name === "Modules") ? true : undefined,
        );
        await api.signIn("Modules", "alice-token");
        await api.addRepository("Modules", repo);
        // A repository without commits shows its webhooks only.
        assert.deepEqual(
          (await repositoryChildren(api, "Modules", repo)).map((c) => c.label),
          ["No webhooks: create one"],
        );
        const pushed = [
          await pushWithBuf(pki.ca.certPath, `${remote}/${repo}`, petFile(1)),
          await pushWithBuf(pki.ca.certPath, `${remote}/${repo}`, petFile(2), ["--label", "v2"]),
        ];
        api.refresh();
        const children = await repositoryChildren(api, "Modules", repo);
        assert.deepEqual(
          children.map((c) => [c.label, c.description]),
          [
            ["No webhooks: create one", undefined],
            ["Recent commits", "2"],
            ["Labels", "2"],
          ],
        );
        const commits = find(children, "Recent commits").children ?? [];
        assert.deepEqual(
          commits.map((c) => c.label),
          [pushed[1].slice(0, 12), pushed[0].slice(0, 12)],
          "newest first",
        );
        assert.match(commits[0].description ?? "", /^v2 · alice · \d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
        assert.match(commits[1].description ?? "", /^main · alice · /);
        assert.ok(commits[0].tooltip?.includes(`Commit ${pushed[1]}`), commits[0].tooltip);
        const labels = find(children, "Labels").children ?? [];
        assert.deepEqual(labels.map((l) => [l.label, l.description]).sort(), [
          ["main", pushed[0].slice(0, 12)],
          ["v2", pushed[1].slice(0, 12)],
        ]);
        await api.signOut("Modules");
        await api.removeRepository("Modules", repo);
      } finally {
        await config.update("registries", undefined, vscode.ConfigurationTarget.Global);
        await registry.close();
      }
    },
  },
  {
    name: "a repository named like markup is shown as that text, and so is the registry's error about it",
    async run() {
      const api = await webhooks();
      const name = await api.addRepository(local, `acme/${hostile}`);
      assert.equal(name, `acme/${hostile}`);
      try {
        const registry = find(await api.snapshot(), local);
        const node = find(registry.children, `acme/${hostile}`);
        assert.equal(node.tooltip, `acme/${hostile} on Local registry (${api.localRegistry()?.url})`);
        const [error] = node.children ?? [];
        assert.equal(error.contextValue, "webhooks-error");
        assert.ok(error.label.includes(`repository acme/${hostile} does not exist`), error.label);
      } finally {
        await api.removeRepository(local, `acme/${hostile}`);
      }
    },
  },
  {
    name: "delete: the repository has no webhook left; deleting again says it is gone",
    timeoutMs: 30_000,
    async run() {
      const api = await webhooks();
      const [hook] = await api.listWebhooks(local, repo);
      assert.ok(hook, "the webhook created earlier");
      await api.deleteWebhook(local, hook.id);
      assert.deepEqual(await api.listWebhooks(local, repo), []);
      assert.deepEqual(
        (await repositoryChildren(api, local, repo)).map((c) => c.label),
        ["No webhooks: create one"],
      );
      await rejectsWith(
        api.deleteWebhook(local, hook.id),
        /not found.*it was deleted already; refresh the view/,
      );
    },
  },
  {
    name: "a push reaches the listener over verified https and its author stays text",
    timeoutMs: 60_000,
    async run() {
      const { webhooks: api, deliveries } = await apis();
      const wasRunning = deliveries.listener() !== undefined;
      const listener = await deliveries.startListener();
      try {
        assert.ok(listener.tls, "the listener serves https");
        const hook = await api.createWebhook(local, repo, listener.callbackUrl);
        try {
          const pushed = await api.push(repo, hostile, ["v1.0.0"]);
          assert.equal(pushed.eventQueued, true);
          // Delivered within one batch interval (5 s), TLS verified against the listener's certificate.
          const item = await waitFor("the delivery", () =>
            deliveries.items().find((i) => i.label.includes(pushed.commitId.slice(0, 8))),
          );
          assert.equal(item.contextValue, "delivery");
          assert.ok(item.description.includes(hostile), item.description);
        } finally {
          await api.deleteWebhook(local, hook.id);
        }
        const none = await api.push(repo, "alice");
        assert.equal(none.eventQueued, false);
      } finally {
        if (!wasRunning) await deliveries.stopListener();
      }
    },
  },
  {
    name: "pushing without the local registry says to start it; stopping removes it from the view",
    async run() {
      const api = await webhooks();
      await api.stopLocalRegistry();
      assert.equal(api.localRegistry(), undefined);
      assert.equal(api.localRegistryRunningContext(), false);
      assert.ok(!(await api.snapshot()).some((n) => n.label === local));
      await rejectsWith(api.push(repo), /the local registry is not running: start it first/);
    },
  },
];
