// The emulator's state: a state file of the older JSON form is migrated (webhooks and the commits of
// `protocall registry push` kept), and a restarted state holds what was committed.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { journalMagic } from "../../../src/core/registry-emulator/journal";
import { newId, normalizeId, ownerIdFor, RegistryState } from "../../../src/core/registry-emulator/state";

test("an older JSON state file is migrated to the journal: webhooks, repositories and their commits", async () => {
  const file = join(mkdtempSync(join(tmpdir(), "protocall-state-")), "state.json");
  const webhook = {
    webhookId: "w1",
    event: 1,
    owner: "acme",
    repository: "petapis",
    callbackUrl: "https://127.0.0.1:1/buf.alpha.webhook.v1alpha1.EventService/Event",
    createTime: "2024-01-01T00:00:00.000Z",
    updateTime: "2024-01-01T00:00:00.000Z",
  };
  const commit = { id: "c1", author: "bob", commitSequenceId: "1" };
  writeFileSync(
    file,
    JSON.stringify({
      version: 1,
      webhooks: [webhook],
      repositories: {
        "acme/petapis": {
          id: "0123456789abcdef0123456789abcdef",
          ownerId: "x",
          createTime: "2024-01-01T00:00:00.000Z",
          updateTime: "2024-01-02T00:00:00.000Z",
          commits: [commit],
        },
      },
    }),
  );
  const state = await RegistryState.open(file);
  assert.deepEqual(state.webhooks, [webhook]);
  const module = state.module("acme", "petapis")!;
  assert.equal(module.id, "0123456789abcdef0123456789abcdef");
  assert.equal(module.ownerId, ownerIdFor("acme"));
  assert.deepEqual(state.alphaCommitsOf(module.id), [commit]);
  await state.close();
  assert.ok(readFileSync(file).subarray(0, 8).equals(journalMagic), "rewritten as a journal");
  const again = await RegistryState.open(file);
  assert.equal(again.webhooks.length, 1);
  await again.close();
});

test("ids: dashless lowercase UUIDs; owner ids are stable UUIDs derived from the name", () => {
  assert.equal(normalizeId("0123456789ABCDEF0123456789ABCDEF"), "0123456789abcdef0123456789abcdef");
  assert.equal(normalizeId("01234567-89ab-cdef-0123-456789abcdef"), "0123456789abcdef0123456789abcdef");
  assert.equal(normalizeId("main"), undefined);
  assert.equal(ownerIdFor("acme"), ownerIdFor("acme"));
  assert.notEqual(ownerIdFor("acme"), ownerIdFor("acme2"));
  assert.match(ownerIdFor("acme"), /^[0-9a-f]{12}5[0-9a-f]{3}[89ab][0-9a-f]{15}$/);
});

test("a label's history (each commit it pointed at) survives a restart and the compaction of the state file", async () => {
  const file = join(mkdtempSync(join(tmpdir(), "protocall-state-")), "state.journal");
  const state = await RegistryState.open(file);
  const time = "2026-01-01T00:00:00.000Z";
  const module = {
    id: newId(),
    ownerId: ownerIdFor("acme"),
    owner: "acme",
    name: "history",
    visibility: "private" as const,
    state: "active" as const,
    description: "",
    url: "",
    defaultLabel: "main",
    createTime: time,
    updateTime: time,
    createdBy: "alice",
  };
  const commit = (n: number) => ({
    id: newId(),
    moduleId: module.id,
    ownerId: module.ownerId,
    createTime: time,
    digest: new Uint8Array(64).fill(n),
    files: [],
    deps: [],
    createdBy: "alice",
    sourceControlUrl: "",
  });
  const [c1, c2] = [commit(1), commit(2)];
  const label = { id: newId(), moduleId: module.id, name: "main", createTime: time, updatedBy: "alice" };
  const move = (commitId: string, i: number) => ({
    t: "label" as const,
    label: { ...label, commitId, updateTime: new Date(Date.UTC(2026, 0, 2, 0, 0, i)).toISOString() },
  });
  await state.commit([
    { t: "module", module },
    { t: "commit", commit: c1 },
    { t: "commit", commit: c2 },
    move(c1.id, 0),
    move(c2.id, 1),
    // Moves to the commit it already points at: not history, but enough records to compact.
    ...Array.from({ length: 1100 }, (_, i) => move(c2.id, i + 2)),
  ]);
  assert.deepEqual(
    state.labelHistoryOf(label.id).map((l) => l.commitId),
    [c1.id, c2.id],
  );
  await state.close();
  const size = statSync(file).size;
  const again = await RegistryState.open(file);
  assert.ok(statSync(file).size < size / 10, "the journal was compacted on open");
  assert.deepEqual(
    again.labelHistoryOf(label.id).map((l) => l.commitId),
    [c1.id, c2.id],
  );
  assert.equal(
    again.label(module.id, "main")?.updateTime,
    new Date(Date.UTC(2026, 0, 2, 0, 0, 1101)).toISOString(),
  );
  await again.close();
});
