// The emulator acknowledges only what is on disk: `protocall registry serve --state` is killed with
// SIGKILL in the middle of a burst of CreateWebhook and Upload calls, restarted on the same state, and
// every call that was answered with success must have left its webhook or commit behind.
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { WebhookEvent, WebhookService } from "../../../src/gen/buf/alpha/registry/v1alpha1/webhook_pb";
import { CommitService } from "../../../src/gen/buf/registry/module/v1/commit_service_pb";
import { UploadService } from "../../../src/gen/buf/registry/module/v1/upload_service_pb";
import { startCliServer } from "../webhooks/support";

const repositories = 1200;
const callbackUrl = "https://127.0.0.1:1/buf.alpha.webhook.v1alpha1.EventService/Event";
const headers = { authorization: "Bearer alice-token" };

function clientsFor(url: string) {
  const transport = createConnectTransport({ baseUrl: url, httpVersion: "1.1" });
  return {
    webhooks: createClient(WebhookService, transport),
    upload: createClient(UploadService, transport),
    commits: createClient(CommitService, transport),
  };
}

test("SIGKILL during a burst of acknowledged writes: after a restart every acknowledged webhook and commit is there", async () => {
  const dir = mkdtempSync(join(tmpdir(), "protocall-emulator-kill-"));
  const configPath = join(dir, "config.json");
  const statePath = join(dir, "registry.state");
  writeFileSync(
    configPath,
    JSON.stringify({
      users: [{ name: "alice", token: "alice-token" }],
      repositories: [
        ...Array.from({ length: repositories }, (_, i) => ({
          owner: "acme",
          name: `r${i}`,
          admins: ["alice"],
        })),
        { owner: "acme", name: "pushed", admins: ["alice"] },
      ],
    }),
  );
  const args = ["registry", "serve", "--config", configPath, "--state", statePath, "--page-size", "5000"];
  const first = await startCliServer(args);
  const acknowledgedWebhooks: string[] = [];
  const acknowledgedCommits: string[] = [];
  let killed = false;
  try {
    const c = clientsFor(first.url);
    let next = 0;
    let pushes = 0;
    const worker = async (w: number) => {
      while (!killed && next < repositories) {
        const i = next++;
        try {
          if (w % 4 === 0) {
            const n = pushes++;
            const res = await c.upload.upload(
              {
                contents: [
                  {
                    moduleRef: { value: { case: "name", value: { owner: "acme", module: "pushed" } } },
                    files: [
                      {
                        path: "p/v1/p.proto",
                        content: Buffer.from(`syntax = "proto3";\npackage p.v1;\nmessage M${n} {}\n`),
                      },
                    ],
                  },
                ],
              },
              { headers },
            );
            acknowledgedCommits.push(res.commits[0].id);
          } else {
            const res = await c.webhooks.createWebhook(
              {
                webhookEvent: WebhookEvent.REPOSITORY_PUSH,
                ownerName: "acme",
                repositoryName: `r${i}`,
                callbackUrl,
              },
              { headers },
            );
            acknowledgedWebhooks.push(res.webhook!.webhookId);
          }
        } catch {
          // Killed while in flight: not acknowledged, so not counted.
        }
      }
    };
    const workers = Array.from({ length: 24 }, (_, w) => worker(w));
    // Kill once a good part of the burst is acknowledged, with calls still in flight.
    while (acknowledgedWebhooks.length + acknowledgedCommits.length < 300) {
      await new Promise((r) => setTimeout(r, 5));
    }
    killed = true;
    await first.kill();
    await Promise.all(workers);
  } finally {
    killed = true;
    await first.kill();
  }
  assert.ok(acknowledgedWebhooks.length >= 150, `${acknowledgedWebhooks.length} webhooks acknowledged`);
  assert.ok(acknowledgedCommits.length >= 30, `${acknowledgedCommits.length} commits acknowledged`);

  const second = await startCliServer(args);
  try {
    const c = clientsFor(second.url);
    const listed = await c.webhooks.listWebhooks({ ownerName: "acme" }, { headers });
    const present = new Set(listed.webhooks.map((w) => w.webhookId));
    const lost = acknowledgedWebhooks.filter((id) => !present.has(id));
    assert.deepEqual(lost, [], `${lost.length} of ${acknowledgedWebhooks.length} acknowledged webhooks lost`);
    for (let i = 0; i < acknowledgedCommits.length; i += 250) {
      const ids = acknowledgedCommits.slice(i, i + 250);
      const res = await c.commits.getCommits(
        { resourceRefs: ids.map((id) => ({ value: { case: "id" as const, value: id } })) },
        { headers },
      );
      assert.deepEqual(
        res.commits.map((x) => x.id),
        ids,
      );
    }
  } finally {
    await second.stop();
  }
});
