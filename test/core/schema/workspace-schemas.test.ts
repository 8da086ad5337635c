// The workspace's schemas as the language server and Send both read them: settings entries, then
// each folder's builds and descriptor-set files; a failing root, an unreadable set or a missing
// settings entry is reported and the others are still used.
import assert from "node:assert/strict";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { openSchema } from "../../../src/core/schema/open-schema";
import {
  findDescriptorSets,
  openWorkspaceSchemas,
  type WorkspaceSchema,
  workspaceProblems,
} from "../../../src/core/schema/workspace-schemas";
import { bufPath } from "../../support/buf";
import { demoDescriptorSet } from "../../support/servers";

describe("workspace schemas", { timeout: 120_000 }, () => {
  let dir: string;
  let entries: WorkspaceSchema[] = [];
  const logs: string[] = [];

  before(async () => {
    const set = await demoDescriptorSet();
    dir = mkdtempSync(join(tmpdir(), "protocall-workspace-schemas-"));
    mkdirSync(join(dir, "good/shop/v1"), { recursive: true });
    writeFileSync(join(dir, "good/buf.yaml"), "version: v2\n");
    writeFileSync(
      join(dir, "good/shop/v1/shop.proto"),
      'syntax = "proto3";\npackage shop.v1;\nservice ShopService {\n  rpc Buy(BuyRequest) returns (BuyRequest);\n}\nmessage BuyRequest {}\n',
    );
    mkdirSync(join(dir, "broken"));
    writeFileSync(join(dir, "broken/buf.yaml"), "version: v2\n");
    writeFileSync(join(dir, "broken/bad.proto"), 'syntax = "proto3";\nmessage Bad {\n');
    mkdirSync(join(dir, "sets/deep"), { recursive: true });
    copyFileSync(set, join(dir, "sets/deep/demo.binpb"));
    writeFileSync(join(dir, "sets/corrupt.binpb"), Buffer.from([0xff, 0xff, 0xff]));
    // Not searched: node_modules and hidden folders.
    mkdirSync(join(dir, "node_modules/x"), { recursive: true });
    copyFileSync(set, join(dir, "node_modules/x/skip.binpb"));
    mkdirSync(join(dir, ".cache"));
    copyFileSync(set, join(dir, ".cache/skip.binpb"));
    entries = await openWorkspaceSchemas({
      schemas: ["missing.binpb", set],
      baseDir: dir,
      folders: [dir],
      build: { bufPath },
      openSetting: (location) =>
        openSchema(location, { cwd: dir, stdin: process.stdin, bufPath }).then((source) => ({ source })),
      log: (line) => logs.push(line),
    });
  });

  after(async () => {
    for (const e of entries) await e.source?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("lists settings entries, then each root's build, then the folder's descriptor sets", () => {
    assert.deepEqual(
      entries.map((e) => [
        e.kind,
        e.origin.startsWith(dir) ? e.origin.slice(dir.length + 1) : "(set)",
        !!e.source,
      ]),
      [
        ["setting", "missing.binpb", false],
        ["setting", "(set)", true],
        ["workspace-build", "broken", false],
        ["workspace-build", "good", true],
        ["descriptor-set", "sets/corrupt.binpb", false],
        ["descriptor-set", "sets/deep/demo.binpb", true],
      ],
    );
  });

  it("a root that fails to build does not stop the others, and says why", async () => {
    const broken = entries.find((e) => e.origin.endsWith("broken"));
    assert.ok(broken?.compilerError, "the build failure carries the compiler's errors");
    assert.match(broken?.problem ?? "", /bad\.proto/);
    const good = entries.find((e) => e.origin.endsWith("good"));
    const found = await good?.source?.findType("shop.v1.ShopService");
    assert.equal(found?.kind, "service");
    const demo = entries.find((e) => e.origin.endsWith("demo.binpb") && e.kind === "descriptor-set");
    assert.equal((await demo?.source?.findType("demo.v1.GreetService"))?.kind, "service");
  });

  it("reports each failure on one line and in the log", () => {
    const problems = workspaceProblems(entries);
    assert.equal(problems.length, 3);
    for (const p of problems) assert.doesNotMatch(p, /\n/);
    assert.ok(
      logs.some((l) => l.includes("cannot build") && l.includes("broken")),
      logs.join("\n"),
    );
    assert.ok(
      logs.some((l) => l.startsWith("built ") && l.includes("good")),
      logs.join("\n"),
    );
    assert.ok(
      logs.some((l) => l.includes("missing.binpb")),
      logs.join("\n"),
    );
  });

  it("finds descriptor sets below a folder, skipping node_modules and hidden folders", async () => {
    const found = await findDescriptorSets(dir);
    assert.deepEqual(
      found.map((f) => f.slice(dir.length + 1)),
      ["sets/corrupt.binpb", "sets/deep/demo.binpb"],
    );
  });

  it("without folders, only the settings entries are opened (the workspace build is off)", async () => {
    const only = await openWorkspaceSchemas({
      schemas: [],
      baseDir: dir,
      folders: [],
      build: { bufPath },
      openSetting: async () => ({ problem: "not asked" }),
    });
    assert.deepEqual(only, []);
  });
});
