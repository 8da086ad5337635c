// The module API's rules, called with a Connect client (buf's own calls are in
// test/cli/registry-buf.test.ts): modules and who may create and read them, uploads (labels, unchanged
// content, dependencies from imports, bad input), reference resolution, graph, download, owners, the
// digest, and the push event a module push fires.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { b5Digest, formatB5 } from "../../../src/core/registry/b5-digest";
import { parseRegistryConfig } from "../../../src/core/registry-emulator/config";
import { type RegistryEmulator, startRegistryEmulator } from "../../../src/core/registry-emulator/server";
import { closePostConnections } from "../../../src/core/webhooks/http-post";
import { type Listener, startListener } from "../../../src/core/webhooks/listener";
import { EventStore } from "../../../src/core/webhooks/store";
import { WebhookEvent, WebhookService } from "../../../src/gen/buf/alpha/registry/v1alpha1/webhook_pb";
import type { Commit } from "../../../src/gen/buf/registry/module/v1/commit_pb";
import { CommitService } from "../../../src/gen/buf/registry/module/v1/commit_service_pb";
import { DigestType } from "../../../src/gen/buf/registry/module/v1/digest_pb";
import { DownloadService } from "../../../src/gen/buf/registry/module/v1/download_service_pb";
import { FileType } from "../../../src/gen/buf/registry/module/v1/file_pb";
import { GraphService } from "../../../src/gen/buf/registry/module/v1/graph_service_pb";
import { ModuleState, ModuleVisibility } from "../../../src/gen/buf/registry/module/v1/module_pb";
import { ModuleService } from "../../../src/gen/buf/registry/module/v1/module_service_pb";
import type { ResourceRef } from "../../../src/gen/buf/registry/module/v1/resource_pb";
import { UploadService } from "../../../src/gen/buf/registry/module/v1/upload_service_pb";
import { OwnerService } from "../../../src/gen/buf/registry/owner/v1/owner_service_pb";
import { createTestPki, type TestPki } from "../../support/tls";
import { waitFor } from "../webhooks/support";

const config = parseRegistryConfig({
  users: [
    { name: "alice", token: "alice-token" },
    { name: "bob", token: "bob-token" },
    { name: "carol", token: "carol-token" },
  ],
  repositories: [
    { owner: "acme", name: "petapis", admins: ["alice"], members: ["bob"] },
    { owner: "acme", name: "open", admins: ["alice"], visibility: "public" },
  ],
  organizations: [{ name: "acme", admins: ["alice"], members: ["bob"] }],
});

let pki: TestPki;
let emulator: RegistryEmulator;
let store: EventStore;
let listener: Listener;
let statePath: string;
const due: (() => void)[] = [];

async function start() {
  return startRegistryEmulator({
    config,
    statePath,
    tls: { cert: pki.server.cert, key: pki.server.key },
    trustCa: pki.ca.cert,
    setTimer: (fn) => {
      due.push(fn);
      return { cancel() {} };
    },
  });
}

before(async () => {
  pki = await createTestPki();
  const dir = mkdtempSync(join(tmpdir(), "protocall-module-api-"));
  statePath = join(dir, "registry.state");
  store = await EventStore.open(join(dir, "events.store"));
  listener = await startListener({ store, tls: { cert: pki.server.cert, key: pki.server.key } });
  emulator = await start();
});

after(async () => {
  await emulator.close();
  await listener.close();
  await store.close();
  closePostConnections();
});

function api(token: string, useBinaryFormat = true) {
  const transport = createConnectTransport({
    baseUrl: emulator.url,
    httpVersion: "1.1",
    useBinaryFormat,
    nodeOptions: { ca: pki.ca.cert },
  });
  const options = { headers: { authorization: `Bearer ${token}` } };
  const modules = createClient(ModuleService, transport);
  const upload = createClient(UploadService, transport);
  const commits = createClient(CommitService, transport);
  const graph = createClient(GraphService, transport);
  const download = createClient(DownloadService, transport);
  const owners = createClient(OwnerService, transport);
  return {
    create: (
      owner: string,
      name: string,
      extra: { visibility?: ModuleVisibility; defaultLabelName?: string } = {},
    ) =>
      modules.createModules(
        { values: [{ ownerRef: { value: { case: "name", value: owner } }, name, ...extra }] },
        options,
      ),
    getByName: (owner: string, module: string) =>
      modules.getModules({ moduleRefs: [{ value: { case: "name", value: { owner, module } } }] }, options),
    getById: (id: string) =>
      modules.getModules({ moduleRefs: [{ value: { case: "id", value: id } }] }, options),
    push: (
      contents: { module: string; files: Record<string, string>; labels?: string[] }[],
      depCommitIds: string[] = [],
    ) =>
      upload.upload(
        {
          contents: contents.map((c) => ({
            moduleRef: {
              value: {
                case: "name" as const,
                value: { owner: c.module.split("/")[0], module: c.module.split("/")[1] },
              },
            },
            files: Object.entries(c.files).map(([path, text]) => ({ path, content: Buffer.from(text) })),
            scopedLabelRefs: (c.labels ?? []).map((name) => ({
              value: { case: "name" as const, value: name },
            })),
          })),
          depCommitIds,
        },
        options,
      ),
    resolve: (module: string, ref?: string) =>
      commits.getCommits({ resourceRefs: [nameRef(module, ref)] }, options).then((r) => r.commits[0]),
    commits: (refs: ResourceRef[]) => commits.getCommits({ resourceRefs: refs }, options),
    graph: (refs: ResourceRef[]) => graph.getGraph({ resourceRefs: refs }, options),
    download: (values: Parameters<typeof download.download>[0]["values"]) =>
      download.download({ values }, options),
    owners: (refs: Parameters<typeof owners.getOwners>[0]["ownerRefs"]) =>
      owners.getOwners({ ownerRefs: refs }, options),
  };
}

function nameRef(module: string, ref?: string): ResourceRef {
  const [owner, name] = module.split("/");
  return {
    value: {
      case: "name",
      value: {
        owner,
        module: name,
        child: ref === undefined ? { case: undefined } : { case: "ref", value: ref },
      },
    },
  } as ResourceRef;
}

const idRef = (id: string) => ({ value: { case: "id", value: id } }) as ResourceRef;

async function refused(promise: Promise<unknown>, code: Code, message: RegExp) {
  await assert.rejects(promise, (err: unknown) => {
    const e = ConnectError.from(err);
    assert.equal(Code[e.code], Code[code], e.message);
    assert.match(e.rawMessage, message);
    return true;
  });
}

const proto = (pkg: string, body = "", imports: string[] = []) =>
  `syntax = "proto3";\n\npackage ${pkg};\n\n${imports.map((i) => `import "${i}";\n`).join("")}\nmessage M {${body}}\n`;

test("CreateModules: the caller becomes Admin; private and label main by default; refusals name the rule", async () => {
  const alice = api("alice-token");
  const [created] = (await alice.create("acme", "fresh")).modules;
  assert.equal(created.name, "fresh");
  assert.equal(created.defaultLabelName, "main");
  assert.equal(created.visibility, ModuleVisibility.PRIVATE);
  assert.equal(created.state, ModuleState.ACTIVE);
  assert.match(created.id, /^[0-9a-f]{32}$/);
  await refused(alice.create("acme", "fresh"), Code.AlreadyExists, /module acme\/fresh already exists/);
  await refused(
    api("carol-token").create("acme", "other"),
    Code.PermissionDenied,
    /carol is not a member of organization acme/,
  );
  await refused(alice.create("bob", "xx"), Code.PermissionDenied, /only bob can/);
  await refused(
    alice.create("acme", "Bad/Name"),
    Code.InvalidArgument,
    /module name "Bad\/Name" is not valid/,
  );
  // Under one's own name, with a visibility and a default label of one's choice.
  const [own] = (
    await api("carol-token").create("carol", "mine", {
      visibility: ModuleVisibility.PUBLIC,
      defaultLabelName: "trunk",
    })
  ).modules;
  assert.equal(own.visibility, ModuleVisibility.PUBLIC);
  assert.equal(own.defaultLabelName, "trunk");
  // The creator is Admin: carol may manage the webhook of her module.
  const webhooks = createClient(
    WebhookService,
    createConnectTransport({ baseUrl: emulator.url, httpVersion: "1.1", nodeOptions: { ca: pki.ca.cert } }),
  );
  const hook = await webhooks.createWebhook(
    {
      webhookEvent: WebhookEvent.REPOSITORY_PUSH,
      ownerName: "carol",
      repositoryName: "mine",
      callbackUrl: listener.callbackUrl,
    },
    { headers: { authorization: "Bearer carol-token" } },
  );
  assert.ok(hook.webhook?.webhookId);
});

test("GetModules by name and by id; private modules need a role, public ones any signed-in user", async () => {
  const alice = api("alice-token");
  const [byName] = (await alice.getByName("acme", "petapis")).modules;
  const [byId] = (await alice.getById(byName.id)).modules;
  assert.equal(byId.name, "petapis");
  assert.equal(byId.ownerId, byName.ownerId);
  await refused(alice.getByName("acme", "nope"), Code.NotFound, /module "acme\/nope" was not found/);
  await refused(
    api("carol-token").getByName("acme", "petapis"),
    Code.PermissionDenied,
    /carol has no role on private module acme\/petapis/,
  );
  assert.equal(
    (await api("carol-token").getByName("acme", "open")).modules[0].visibility,
    ModuleVisibility.PUBLIC,
  );
});

test("Upload: no label moves the default label; --label moves only those; unchanged content returns the same commit", async () => {
  const bob = api("bob-token");
  const v1 = { "pet/v1/pet.proto": proto("pet.v1", " string name = 1; "), LICENSE: "MIT\n" };
  const [first] = (await bob.push([{ module: "acme/petapis", files: v1 }])).commits;
  assert.match(first.id, /^[0-9a-f]{32}$/);
  assert.equal(first.digest?.type, DigestType.B5);
  assert.equal(
    formatB5(first.digest!.value),
    formatB5(b5Digest(Object.entries(v1).map(([path, t]) => ({ path, content: Buffer.from(t) })))),
  );
  assert.equal((await bob.resolve("acme/petapis")).id, first.id, "main moved");
  assert.equal((await bob.resolve("acme/petapis", "main")).id, first.id);

  const v2 = { ...v1, "pet/v1/pet.proto": proto("pet.v1", " string name = 1; int32 age = 2; ") };
  const [second] = (await bob.push([{ module: "acme/petapis", files: v2, labels: ["beta", "v2"] }])).commits;
  assert.notEqual(second.id, first.id);
  assert.equal((await bob.resolve("acme/petapis")).id, first.id, "main stays");
  assert.equal((await bob.resolve("acme/petapis", "beta")).id, second.id);
  assert.equal((await bob.resolve("acme/petapis", "v2")).id, second.id);

  const [again] = (await bob.push([{ module: "acme/petapis", files: v2 }])).commits;
  assert.equal(again.id, second.id, "unchanged content: the existing commit");
  assert.equal((await bob.resolve("acme/petapis")).id, second.id, "and the labels still move");
  assert.equal(again.createTime?.seconds, second.createTime?.seconds);
});

test("GetCommits: commit ids (dashless or dashed) win over labels; refs by id; unknown refs and an empty default label", async () => {
  const alice = api("alice-token");
  await alice.create("acme", "refs");
  const files = (n: number) => ({ "r/v1/r.proto": proto("r.v1", ` int32 f${n} = 1; `) });
  const [c1] = (await alice.push([{ module: "acme/refs", files: files(1), labels: ["v1"] }])).commits;
  await refused(
    alice.resolve("acme/refs"),
    Code.FailedPrecondition,
    /acme\/refs has no commit on its default label "main"/,
  );
  const [c2] = (await alice.push([{ module: "acme/refs", files: files(2), labels: [c1.id] }])).commits;
  assert.equal(
    (await alice.resolve("acme/refs", c1.id)).id,
    c1.id,
    "a commit id wins over a label of that name",
  );
  const dashed = c2.id.replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, "$1-$2-$3-$4-$5");
  assert.equal((await alice.resolve("acme/refs", dashed)).id, c2.id);
  assert.equal((await alice.resolve("acme/refs", "v1")).id, c1.id);
  const labelRef = {
    value: {
      case: "name",
      value: { owner: "acme", module: "refs", child: { case: "labelName", value: c1.id } },
    },
  } as ResourceRef;
  assert.equal((await alice.commits([labelRef])).commits[0].id, c2.id, "label_name is only a label");
  const [module] = (await alice.getByName("acme", "refs")).modules;
  const byIds = await alice.commits([idRef(c1.id), idRef(dashed)]);
  assert.deepEqual(
    byIds.commits.map((c: Commit) => c.id),
    [c1.id, c2.id],
  );
  assert.equal(byIds.commits[0].moduleId, module.id);
  await refused(
    alice.resolve("acme/refs", "v9"),
    Code.NotFound,
    /no commit or label "v9" was found in module acme\/refs/,
  );
  await refused(alice.resolve("acme/nope", "v1"), Code.NotFound, /module "acme\/nope" was not found/);
  await refused(alice.commits([idRef(module.id)]), Code.FailedPrecondition, /no commit on its default label/);
  await refused(alice.commits([]), Code.InvalidArgument, /at least one/);
  await refused(
    alice.commits(Array.from({ length: 251 }, () => idRef(c1.id))),
    Code.InvalidArgument,
    /at most 250/,
  );
});

test("a multi-module upload: dependencies come from imports, in any order; digests cover them; graph and download", async () => {
  const alice = api("alice-token");
  for (const m of ["tiny", "middle", "top"]) await alice.create("acme", m);
  const tiny = {
    "tiny/v1/tiny.proto": 'syntax = "proto3";\n\npackage tiny.v1;\n\nmessage Tiny {}\n',
    LICENSE: "MIT\n",
  };
  const [tinyCommit] = (await alice.push([{ module: "acme/tiny", files: tiny }])).commits;
  const middle = {
    "middle/v1/middle.proto": proto("middle.v1", " tiny.v1.Tiny t = 1; ", [
      "tiny/v1/tiny.proto",
      "google/protobuf/empty.proto",
    ]),
  };
  const top = {
    "top/v1/top.proto": proto("top.v1", " middle.v1.M m = 1; ", ["middle/v1/middle.proto"]),
    "README.md": "# top\n",
  };
  // top (which imports middle) first: the registry orders them; tiny is a remote dependency.
  const res = await alice.push(
    [
      { module: "acme/top", files: top },
      { module: "acme/middle", files: middle },
    ],
    [tinyCommit.id],
  );
  const [topCommit, middleCommit] = res.commits;
  const asFiles = (f: Record<string, string>) =>
    Object.entries(f).map(([path, t]) => ({ path, content: Buffer.from(t) }));
  const middleB5 = b5Digest(asFiles(middle), [tinyCommit.digest!.value]);
  assert.equal(formatB5(middleCommit.digest!.value), formatB5(middleB5));
  assert.equal(
    formatB5(topCommit.digest!.value),
    formatB5(b5Digest(asFiles(top), [middleB5, tinyCommit.digest!.value])),
    "top covers middle and, transitively, tiny",
  );

  const { graph } = await alice.graph([nameRef("acme/top", topCommit.id)]);
  assert.deepEqual(
    new Set(graph!.commits.map((c) => c.id)),
    new Set([topCommit.id, middleCommit.id, tinyCommit.id]),
  );
  assert.deepEqual(
    graph!.edges.map((e) => `${e.fromNode?.commitId}->${e.toNode?.commitId}`).sort(),
    [`${topCommit.id}->${middleCommit.id}`, `${middleCommit.id}->${tinyCommit.id}`].sort(),
  );

  const [all] = (await alice.download([{ resourceRef: idRef(topCommit.id), fileTypes: [], paths: [] }]))
    .contents;
  assert.equal(all.commit?.id, topCommit.id);
  assert.deepEqual(all.files.map((f) => f.path).sort(), ["README.md", "top/v1/top.proto"]);
  assert.equal(Buffer.from(all.files.find((f) => f.path === "README.md")!.content).toString(), "# top\n");
  const [protos] = (
    await alice.download([
      { resourceRef: nameRef("acme/tiny", "main"), fileTypes: [FileType.PROTO], paths: [] },
    ])
  ).contents;
  assert.deepEqual(
    protos.files.map((f) => f.path),
    ["tiny/v1/tiny.proto"],
  );
  const [byPath] = (
    await alice.download([{ resourceRef: idRef(tinyCommit.id), fileTypes: [], paths: ["tiny"] }])
  ).contents;
  assert.deepEqual(
    byPath.files.map((f) => f.path),
    ["tiny/v1/tiny.proto"],
  );
  await refused(
    alice.download([{ resourceRef: idRef(tinyCommit.id), fileTypes: [], paths: ["nope"] }]),
    Code.NotFound,
    /path "nope" matches no file/,
  );
  const [lenient] = (
    await alice.download([
      { resourceRef: idRef(tinyCommit.id), fileTypes: [], paths: ["nope"], pathsAllowNotExist: true },
    ])
  ).contents;
  assert.deepEqual(lenient.files, []);
});

test("Upload refusals: unknown module, no role, an import nobody provides, unknown dependency, a cycle, files that are not module files", async () => {
  const alice = api("alice-token");
  const ok = { "x/v1/x.proto": proto("x.v1") };
  await refused(
    alice.push([{ module: "acme/ghost", files: ok }]),
    Code.NotFound,
    /module "acme\/ghost" was not found/,
  );
  await refused(
    api("carol-token").push([{ module: "acme/open", files: ok }]),
    Code.PermissionDenied,
    /carol may not push to acme\/open: pushing needs the member or Admin role/,
  );
  await alice.create("acme", "lonely");
  await refused(
    alice.push([
      { module: "acme/lonely", files: { "l/v1/l.proto": proto("l.v1", "", ["dep/v1/dep.proto"]) } },
    ]),
    Code.InvalidArgument,
    /acme\/lonely: l\/v1\/l\.proto imports "dep\/v1\/dep\.proto", which neither the pushed modules nor the dependency commits/,
  );
  await refused(
    alice.push([{ module: "acme/lonely", files: ok }], ["0123456789abcdef0123456789abcdef"]),
    Code.NotFound,
    /dependency commit "0123456789abcdef0123456789abcdef" was not found/,
  );
  await alice.create("acme", "cyc-a");
  await alice.create("acme", "cyc-b");
  await refused(
    alice.push([
      { module: "acme/cyc-a", files: { "a.proto": proto("a", "", ["b.proto"]) } },
      { module: "acme/cyc-b", files: { "b.proto": proto("b", "", ["a.proto"]) } },
    ]),
    Code.InvalidArgument,
    /import each other in a cycle: acme\/cyc-a -> acme\/cyc-b -> acme\/cyc-a|acme\/cyc-b -> acme\/cyc-a -> acme\/cyc-b/,
  );
  await refused(
    alice.push([{ module: "acme/lonely", files: { ...ok, "buf.yaml": "version: v2\n" } }]),
    Code.InvalidArgument,
    /"buf\.yaml" is not a module file/,
  );
  await refused(
    alice.push([{ module: "acme/lonely", files: { LICENSE: "MIT" } }]),
    Code.InvalidArgument,
    /no \.proto file/,
  );
  await refused(
    alice.push([{ module: "acme/lonely", files: { "../x.proto": proto("x") } }]),
    Code.InvalidArgument,
    /file path "\.\.\/x\.proto" is not valid/,
  );
  await refused(
    alice.push([{ module: "acme/lonely", files: ok, labels: ["has space"] }]),
    Code.InvalidArgument,
    /label name "has space" is not valid/,
  );
});

test("GetOwners by id and by name: users and organizations", async () => {
  const alice = api("alice-token");
  const [petapis] = (await alice.getByName("acme", "petapis")).modules;
  const { owners } = await alice.owners([
    { value: { case: "id", value: petapis.ownerId } },
    { value: { case: "name", value: "bob" } },
  ]);
  assert.equal(owners[0].value.case, "organization");
  assert.equal(owners[0].value.value?.name, "acme");
  assert.equal(owners[0].value.value?.id, petapis.ownerId);
  assert.equal(owners[1].value.case, "user");
  assert.equal(owners[1].value.value?.name, "bob");
  await refused(
    alice.owners([{ value: { case: "name", value: "nobody" } }]),
    Code.NotFound,
    /owner "nobody" was not found/,
  );
});

test("a module push fires the repository-push webhook: commit id, b5 digest, author, labels as tags; unchanged content fires nothing", async () => {
  const alice = api("alice-token");
  await alice.create("acme", "hooked");
  const webhooks = createClient(
    WebhookService,
    createConnectTransport({ baseUrl: emulator.url, httpVersion: "1.1", nodeOptions: { ca: pki.ca.cert } }),
  );
  await webhooks.createWebhook(
    {
      webhookEvent: WebhookEvent.REPOSITORY_PUSH,
      ownerName: "acme",
      repositoryName: "hooked",
      callbackUrl: listener.callbackUrl,
    },
    { headers: { authorization: "Bearer alice-token" } },
  );
  const before = store.count();
  const [commit] = (
    await api("bob-token").push([
      { module: "acme/hooked", files: { "h/v1/h.proto": proto("h.v1") }, labels: ["v1", "main"] },
    ])
  ).commits;
  (await waitFor(() => due.shift(), "the batch timer"))();
  await waitFor(() => store.count() > before, "the delivery");
  const event = (await store.list()).at(-1)!.event as {
    payload: {
      repositoryPush: { repositoryCommit: Record<string, unknown>; repository: Record<string, unknown> };
    };
  };
  const c = event.payload.repositoryPush.repositoryCommit;
  assert.equal(c.id, commit.id);
  assert.equal(c.name, commit.id);
  assert.equal(c.author, "bob");
  assert.equal(c.b5Digest, formatB5(commit.digest!.value));
  assert.equal(c.digest, formatB5(commit.digest!.value));
  assert.match(c.manifestDigest as string, /^shake256:[0-9a-f]{128}$/);
  assert.deepEqual(
    (c.tags as { name: string; commitName: string }[]).map((t) => [t.name, t.commitName]),
    [
      ["v1", commit.id],
      ["main", commit.id],
    ],
  );
  assert.equal(c.branch, "main");
  assert.equal(c.commitSequenceId, "1");
  assert.equal(
    Date.parse(c.createTime as string),
    Number(commit.createTime!.seconds) * 1000 + Math.floor(commit.createTime!.nanos / 1e6),
  );
  const repo = event.payload.repositoryPush.repository;
  assert.equal(repo.name, "hooked");
  assert.equal(repo.ownerName, "acme");
  assert.equal(repo.visibility, "VISIBILITY_PRIVATE");
  // The same content again: the same commit, no new event.
  await waitFor(() => emulator.deliveries().some((d) => d.commitId === commit.id), "the attempt");
  const deliveries = emulator.deliveries().length;
  const [same] = (
    await api("bob-token").push([{ module: "acme/hooked", files: { "h/v1/h.proto": proto("h.v1") } }])
  ).commits;
  assert.equal(same.id, commit.id);
  assert.equal(due.length, 0, "nothing queued");
  assert.equal(emulator.deliveries().length, deliveries);
});

test("JSON as well as binary", async () => {
  const [m] = (await api("alice-token", false).getByName("acme", "petapis")).modules;
  assert.equal(m.name, "petapis");
});

test("a restart keeps modules, commits with their content, labels and webhooks", async () => {
  const alice = api("alice-token");
  const [created] = (await alice.create("acme", "kept")).modules;
  const files = { "k/v1/k.proto": proto("k.v1"), LICENSE: "Apache-2.0\n" };
  const [commit] = (await alice.push([{ module: "acme/kept", files, labels: ["v1", "main"] }])).commits;
  await emulator.close();
  emulator = await start();
  const again = api("alice-token");
  assert.equal((await again.getByName("acme", "kept")).modules[0].id, created.id);
  assert.equal((await again.resolve("acme/kept", "v1")).id, commit.id);
  assert.equal((await again.resolve("acme/kept")).id, commit.id);
  const [content] = (await again.download([{ resourceRef: idRef(commit.id), fileTypes: [], paths: [] }]))
    .contents;
  assert.deepEqual(
    Object.fromEntries(content.files.map((f) => [f.path, Buffer.from(f.content).toString()])),
    files,
  );
  assert.deepEqual(content.commit?.digest?.value, commit.digest?.value);
  const [same] = (await again.push([{ module: "acme/kept", files }])).commits;
  assert.equal(same.id, commit.id, "the content is known after the restart");
});
