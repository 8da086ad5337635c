// The registry client's listings that the Webhooks view shows: a module's latest commits (newest
// first) and its labels, from `protocall registry serve` with modules pushed by the real buf; a module
// that does not exist and a user without a role get buf's wording.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { ModuleClient } from "../../../src/core/registry/module-client";
import { startTestRegistry, type TestRegistry, tempWorkspace } from "../../support/registry";
import { accessFor } from "../../support/registry-access";

let registry: TestRegistry;
const pushed: string[] = [];

before(async () => {
  registry = await startTestRegistry();
  for (const [i, label] of [
    [1, ""],
    [2, "beta"],
    [3, ""],
  ] as const) {
    const ws = tempWorkspace({
      "buf.yaml": registry.bufYaml([{ path: "proto", name: "acme/listed" }]),
      "proto/listed/v1/listed.proto": `syntax = "proto3";\n\npackage listed.v1;\n\nmessage V${i} {}\n`,
    });
    const args = ["push", ...(i === 1 ? ["--create", "--create-visibility", "private"] : [])];
    const r = await registry.buf(label ? [...args, "--label", label] : args, {
      cwd: ws,
      token: "alice-token",
    });
    assert.equal(r.code, 0, r.stderr);
    pushed.push(r.stdout.trim().split(":").pop() ?? "");
  }
});

after(() => registry?.close());

const client = (token: string) =>
  new ModuleClient({
    access: accessFor(`https://${registry.remote}`, token, registry.pki.ca.cert),
    baseUrl: registry.url,
  });

test("listCommits: the latest commits, newest first, with their times; listLabels: each label and its commit", async () => {
  const commits = await client("bob-token").listCommits("acme", "listed");
  assert.deepEqual(
    commits.map((c) => c.id),
    [...pushed].reverse(),
  );
  assert.ok(commits.every((c) => c.createTime instanceof Date && c.digest.length === 64));
  assert.deepEqual(
    (await client("bob-token").listCommits("acme", "listed", 2)).map((c) => c.id),
    [pushed[2], pushed[1]],
  );
  const labels = await client("bob-token").listLabels("acme", "listed");
  assert.deepEqual(labels.map((l) => [l.name, l.commitId]).sort(), [
    ["beta", pushed[1]],
    ["main", pushed[2]],
  ]);
});

test("a module that does not exist, and a user without a role: one line each, as buf words them", async () => {
  await assert.rejects(client("bob-token").listCommits("acme", "nope"), {
    message: /module "acme\/nope" was not found/,
  });
  await assert.rejects(client("carol-token").listLabels("acme", "listed"), {
    message: /permission_denied: user carol has no role on private module acme\/listed/,
  });
});
