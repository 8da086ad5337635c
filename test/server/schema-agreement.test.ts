// The editor checks a request against the schema Send calls it with: for each request, the real
// language server (over stdio) reports an error exactly when the call (the core's call session, given
// the workspace's schemas as the editor's Send gets them, core/schema/workspace-schemas.ts) fails
// before the RPC. Real demo servers on loopback, one with reflection and one without; a workspace
// whose build defines demo.v1.GreetService differently from the servers, defines a service only it
// has, holds a descriptor set (`*.binpb`) in a folder, and has a root that does not build.
import assert from "node:assert/strict";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { type CallResult, type CallSession, createCallSession } from "../../src/core/invoke/call-session";
import { prepareSend } from "../../src/core/rpcfile/prepare-send";
import { openSchema } from "../../src/core/schema/open-schema";
import type { SchemaSource } from "../../src/core/schema/types";
import { openWorkspaceSchemas, type WorkspaceSchema } from "../../src/core/schema/workspace-schemas";
import { bufPath } from "../support/buf";
import { type DemoServer, demoDescriptorSet, startDemoServer } from "../support/servers";
import { LspClient } from "./lsp-client";

const greetProto = `syntax = "proto3";
package demo.v1;
service GreetService {
  rpc Greet(GreetRequest) returns (GreetResponse);
  // Only here: the servers do not have it.
  rpc Wave(GreetRequest) returns (GreetResponse);
}
// The workspace's own idea of the request: not what the servers have.
message GreetRequest {
  string nickname = 1;
}
message GreetResponse {
  string greeting = 1;
}
`;

const extraProto = `syntax = "proto3";
package acme.v1;
service ExtraService {
  rpc Do(DoRequest) returns (DoResponse);
}
message DoRequest {}
message DoResponse {}
`;

describe("the editor and Send agree on a request's schema", { timeout: 180_000 }, () => {
  let dir: string;
  let set: string;
  let reflecting: DemoServer;
  let plain: DemoServer;
  let client: LspClient;
  let session: CallSession;
  let workspace: WorkspaceSchema[];
  let count = 0;

  before(async () => {
    set = await demoDescriptorSet();
    dir = mkdtempSync(join(tmpdir(), "protocall-agreement-"));
    mkdirSync(join(dir, "api/demo/v1"), { recursive: true });
    mkdirSync(join(dir, "api/acme/v1"), { recursive: true });
    writeFileSync(join(dir, "api/buf.yaml"), "version: v2\n");
    writeFileSync(join(dir, "api/demo/v1/greet.proto"), greetProto);
    writeFileSync(join(dir, "api/acme/v1/extra.proto"), extraProto);
    // A root that does not build: the others are still used, by both.
    mkdirSync(join(dir, "broken"));
    writeFileSync(join(dir, "broken/buf.yaml"), "version: v2\n");
    writeFileSync(join(dir, "broken/bad.proto"), 'syntax = "proto3";\npackage bad.v1;\nmessage Bad {\n');
    // A descriptor set in a folder: the only place demo.v1.DemoService is in the workspace.
    mkdirSync(join(dir, "sets"));
    copyFileSync(set, join(dir, "sets/demo.binpb"));
    [reflecting, plain] = await Promise.all([startDemoServer(), startDemoServer({ reflection: false })]);
    client = await LspClient.start({
      rootDir: dir,
      initializationOptions: { bufPath, reflectionTimeoutMs: 5000 },
    });
    // As the editor's Send reads the workspace (workspace-sources.ts), with the same settings.
    workspace = await openWorkspaceSchemas({
      schemas: [],
      baseDir: dir,
      folders: [dir],
      build: { bufPath },
      openSetting: (location) =>
        openSchema(location, { cwd: dir, stdin: process.stdin, bufPath }).then((source) => ({ source })),
    });
    const sources: SchemaSource[] = workspace.flatMap((e) => (e.source ? [e.source] : []));
    session = createCallSession({ fallbackSources: () => sources, reflectionTimeoutMs: 5000 });
  });

  after(async () => {
    await client?.close();
    await session?.close();
    for (const e of workspace ?? []) await e.source?.close();
    await Promise.all([reflecting?.close(), plain?.close()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** The editor's errors for a request file, and what Send does with it. */
  async function both(text: string): Promise<{ errors: string[]; sent: CallResult }> {
    const path = join(dir, `request-${++count}.rpc`);
    writeFileSync(path, text);
    const uri = pathToFileURL(path).href;
    client.open(uri, text);
    const diagnostics = await client.diagnosticsFor(uri, 1, 60_000);
    const errors = diagnostics.filter((d) => d.severity === 1).map((d) => d.message);
    const prepared = prepareSend({ text, filePath: path, requestIndex: 0, processEnv: process.env });
    assert.deepEqual(prepared.problems, []);
    assert.ok(prepared.options);
    const sent = await session.call(prepared.options, {
      cwd: prepared.baseDir,
      env: process.env,
      homedir: homedir(),
    });
    return { errors, sent };
  }

  /** The editor shows an error exactly when Send fails before the RPC (an RPC error has a code). */
  function agree(r: { errors: string[]; sent: CallResult }): void {
    const why = `editor: ${JSON.stringify(r.errors)}; Send: ${r.sent.error?.text ?? "ok"}`;
    const refused = !r.sent.ok && r.sent.code === undefined;
    assert.equal(r.errors.length > 0, refused, `they disagree: ${why}`);
  }

  it("the workspace's build and its failing root are what both see", () => {
    const kinds = workspace.map((e) => `${e.kind} ${e.source ? "ok" : "failed"}`);
    assert.deepEqual(kinds, ["workspace-build ok", "workspace-build failed", "descriptor-set ok"]);
  });

  it("with @schema, the workspace is not asked: a service only the workspace has is unknown to both", async () => {
    const r = await both(`# @schema ${set}\n${plain.url}/acme.v1.ExtraService/Do\n\n{}\n`);
    agree(r);
    assert.equal(r.sent.ok, false);
    assert.match(r.sent.error?.message ?? "", /ExtraService/);
    assert.ok(
      r.errors.some((e) => e.includes('unknown service "acme.v1.ExtraService"')),
      r.errors.join("\n"),
    );
  });

  it("without @schema, the server's reflection comes before the workspace: its fields are valid", async () => {
    const r = await both(`${reflecting.url}/demo.v1.GreetService/Greet\n\n{"name": "Ada"}\n`);
    agree(r);
    assert.equal(r.sent.ok, true, r.sent.error?.text);
  });

  it("without @schema, a field only the workspace's definition has is wrong for both", async () => {
    const r = await both(`${reflecting.url}/demo.v1.GreetService/Greet\n\n{"nickname": "Ada"}\n`);
    agree(r);
    assert.equal(r.sent.ok, false);
    assert.ok(
      r.errors.some((e) => e.includes('unknown field "nickname"')),
      r.errors.join("\n"),
    );
  });

  it("a server without reflection is called with the workspace's build", async () => {
    const r = await both(`${plain.url}/demo.v1.GreetService/Greet\n\n{"nickname": "Ada"}\n`);
    agree(r);
    assert.equal(r.sent.ok, true, r.sent.error?.text);
    assert.match(r.sent.messages[0] ?? "", /Ada/);
  });

  it("a descriptor set in a folder is part of the workspace for both, next to a root that fails", async () => {
    const r = await both(`${plain.url}/demo.v1.DemoService/Echo\n\n{"text": "hi"}\n`);
    agree(r);
    assert.equal(r.sent.ok, true, r.sent.error?.text);
  });

  it("@reflect false without @schema is refused by both (the workspace is no --schema)", async () => {
    const r = await both(
      `# @reflect false\n${plain.url}/demo.v1.GreetService/Greet\n\n{"nickname": "Ada"}\n`,
    );
    agree(r);
    assert.equal(r.sent.ok, false);
    assert.ok(
      r.errors.some((e) => e.startsWith("--reflect=false needs a schema")),
      r.errors.join("\n"),
    );
  });

  it("a method the reflected service lacks is taken from the workspace's definition by both", async () => {
    const r = await both(`${reflecting.url}/demo.v1.GreetService/Wave\n\n{"nickname": "Ada"}\n`);
    agree(r);
    // Resolved and sent: the server answers that it has no such method.
    assert.equal(r.sent.code, "unimplemented", r.sent.error?.text);
  });

  it("a method neither has is an error for both", async () => {
    const r = await both(`${plain.url}/demo.v1.DemoService/Nope\n\n{}\n`);
    agree(r);
    assert.equal(r.sent.ok, false);
  });
});
