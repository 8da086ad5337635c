// Where the language server takes a request's schema from, over a real LSP connection: `@schema`
// descriptor sets, reflection over TLS with the request's certificate options and headers, and the
// workspace build, whose compiler errors go to the .proto files.
import assert from "node:assert/strict";
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import type { Diagnostic } from "vscode-languageserver-protocol";
import { DemoService } from "../../src/gen/demo/v1/demo_pb";
import { bufPath } from "../support/buf";
import { repoRoot } from "../support/cli";
import { type DemoServer, demoDescriptorSet, startDemoServer, startTlsDemoServer } from "../support/servers";
import { createTestPki, type TestPki } from "../support/tls";
import { LspClient, positionOf } from "./lsp-client";
import { createWorkspace, shopProto } from "./workspace";

/** The installed Connect version, which the User-Agent names (as connect-es does). */
const connectVersion: string = JSON.parse(
  readFileSync(join(repoRoot, "node_modules/@connectrpc/connect/package.json"), "utf8"),
).version;

function find(diagnostics: Diagnostic[], text: string): Diagnostic {
  const d = diagnostics.find((x) => x.message.includes(text));
  assert.ok(d, `no diagnostic with "${text}" in:\n${diagnostics.map((x) => x.message).join("\n")}`);
  return d;
}

describe("language server schema sources", { timeout: 120_000 }, () => {
  let dir: string;
  let pki: TestPki;
  let tlsDemo: DemoServer;
  let demo: DemoServer;
  let client: LspClient;

  before(async () => {
    dir = createWorkspace();
    pki = await createTestPki(["localhost", "127.0.0.1"]);
    [tlsDemo, demo] = await Promise.all([startTlsDemoServer(pki), startDemoServer()]);
    client = await LspClient.start({
      rootDir: dir,
      initializationOptions: { bufPath, reflectionTimeoutMs: 5000 },
    });
  });

  after(async () => {
    await client?.close();
    await Promise.all([tlsDemo?.close(), demo?.close()]);
    rmSync(dir, { recursive: true, force: true });
    if (pki) rmSync(pki.dir, { recursive: true, force: true });
  });

  it("reads a descriptor set named by @schema", async () => {
    const set = await demoDescriptorSet();
    const text = `###
# @schema ${set}
http://127.0.0.1:9/demo.v1.GreetService/Greet

{"nam": "x"}
`;
    const uri = pathToFileURL(join(dir, "schema-option.rpc")).href;
    client.open(uri, text);
    const diagnostics = await client.diagnosticsFor(uri, 1);
    find(diagnostics, 'unknown field "nam" in message demo.v1.GreetRequest (did you mean "name"?)');
    const hover = await client.hover(uri, positionOf(text, "Greet\n", 1));
    assert.ok(hover);
    assert.match((hover.contents as { value: string }).value, /GreetService\.Greet/);
  });

  it("reads descriptor-set files (*.binpb) found in the workspace folders", async () => {
    const text = '###\n# @reflect false\nhttp://127.0.0.1:9/demo.v1.GreetService/Greet\n\n{"nam": "x"}\n';
    const uri = pathToFileURL(join(dir, "binpb.rpc")).href;
    client.open(uri, text);
    const before = await client.diagnosticsFor(uri, 1);
    assert.ok(!before.some((d) => d.message.includes('unknown field "nam"')), "not in the workspace yet");
    mkdirSync(join(dir, "sets"), { recursive: true });
    copyFileSync(await demoDescriptorSet(), join(dir, "sets/demo.binpb"));
    void client.connection.sendNotification("workspace/didChangeWatchedFiles", {
      changes: [{ uri: pathToFileURL(join(dir, "sets/demo.binpb")).href, type: 1 }],
    });
    client.change(uri, text, 2);
    const after = await client.diagnosticsFor(uri, 2);
    find(after, 'unknown field "nam" in message demo.v1.GreetRequest');
    rmSync(join(dir, "sets"), { recursive: true, force: true });
    void client.connection.sendNotification("workspace/didChangeWatchedFiles", {
      changes: [{ uri: pathToFileURL(join(dir, "sets/demo.binpb")).href, type: 3 }],
    });
  });

  it("reflects over TLS with the request's @cacert, and says so when it cannot", async () => {
    const url = `${tlsDemo.url}/demo.v1.GreetService/Greet`;
    const trusted = `###\n# @cacert ${pki.ca.certPath}\n${url}\n\n{"nam": "x"}\n`;
    const uri = pathToFileURL(join(dir, "tls.rpc")).href;
    client.open(uri, trusted);
    find(await client.diagnosticsFor(uri, 1), 'unknown field "nam" in message demo.v1.GreetRequest');

    const untrusted = `###\n${url}\n\n{"nam": "x"}\n`;
    client.change(uri, untrusted, 2);
    const diagnostics = await client.diagnosticsFor(uri, 2);
    const d = find(
      diagnostics,
      'service "demo.v1.GreetService" is not in the workspace\'s schema, and it cannot be checked',
    );
    assert.equal(d.severity, 3);
    assert.ok(!diagnostics.some((x) => x.message.includes("unknown field")));
  });

  it("sends the request's headers with reflection", async () => {
    const text = `###\n${demo.url}/demo.v1.GreetService/Greet\nx-reflect-check: from-the-editor\n\n{"name": "x"}\n`;
    const uri = pathToFileURL(join(dir, "headers.rpc")).href;
    client.open(uri, text);
    assert.deepEqual(await client.diagnosticsFor(uri, 1), []);
    const inspect = createClient(
      DemoService,
      createConnectTransport({ baseUrl: demo.url, httpVersion: "1.1" }),
    );
    const r = await inspect.inspect({ reflectionHeaderNames: ["x-reflect-check"] }, { timeoutMs: 5000 });
    assert.deepEqual(
      r.reflectionHeaders.map((h) => [h.name, h.value]),
      [["x-reflect-check", "from-the-editor"]],
    );

    // With @reflect-header, reflection gets those headers only, as `protocall curl --reflect-header`.
    const own = `###\n# @reflect-header x-reflect-check: only-this\n${demo.url}/demo.v1.GreetService/Greet\nx-reflect-check: not-this\n\n{"name": "x"}\n`;
    const ownUri = pathToFileURL(join(dir, "reflect-header.rpc")).href;
    client.open(ownUri, own);
    assert.deepEqual(await client.diagnosticsFor(ownUri, 1), []);
    const r2 = await inspect.inspect({ reflectionHeaderNames: ["x-reflect-check"] }, { timeoutMs: 5000 });
    assert.deepEqual(
      r2.reflectionHeaders.map((h) => [h.name, h.value]),
      [["x-reflect-check", "only-this"]],
    );
  });

  it("reflects with the request's credentials (@user, @netrc-file) and the User-Agent, as a call does", async () => {
    const inspect = createClient(
      DemoService,
      createConnectTransport({ baseUrl: demo.url, httpVersion: "1.1" }),
    );
    const seen = async () => {
      const r = await inspect.inspect(
        { reflectionHeaderNames: ["authorization", "user-agent"] },
        { timeoutMs: 5000 },
      );
      return Object.fromEntries(r.reflectionHeaders.map((h) => [h.name, h.value]));
    };
    const basic = (user: string) => `Basic ${Buffer.from(user).toString("base64")}`;
    const text = `###\n# @user ada:pw\n${demo.url}/demo.v1.GreetService/Greet\n\n{"name": "x"}\n`;
    const uri = pathToFileURL(join(dir, "credentials.rpc")).href;
    client.open(uri, text);
    assert.deepEqual(await client.diagnosticsFor(uri, 1), []);
    const withUser = await seen();
    assert.equal(withUser.authorization, basic("ada:pw"));
    assert.match(
      withUser["user-agent"],
      new RegExp(`^connect-es/${connectVersion.replaceAll(".", "\\.")} protocall/\\d+\\.\\d+\\.\\d+`),
    );

    writeFileSync(join(dir, "netrc"), `machine 127.0.0.1:${demo.port} login grace password pw2\n`);
    const netrc = `###\n# @netrc-file netrc\n${demo.url}/demo.v1.DemoService/Echo\n\n{}\n`;
    const netrcUri = pathToFileURL(join(dir, "netrc.rpc")).href;
    client.open(netrcUri, netrc);
    assert.deepEqual(await client.diagnosticsFor(netrcUri, 1), []);
    assert.equal((await seen()).authorization, basic("grace:pw2"));
  });

  it("publishes compiler errors for .proto files and clears them when fixed", async () => {
    const protoPath = join(dir, "proto/acme/v1/shop.proto");
    const protoUri = pathToFileURL(protoPath).href;
    writeFileSync(protoPath, shopProto.replace("string id = 1;", "strin id = 1;"));
    void client.connection.sendNotification("workspace/didChangeWatchedFiles", {
      changes: [{ uri: protoUri, type: 2 }],
    });
    const deadline = Date.now() + 30_000;
    const latest = () => client.published(protoUri).at(-1)?.diagnostics;
    while (!latest()?.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const errors = latest() ?? [];
    const line = shopProto.split("\n").findIndex((l) => l.includes("string id = 1;"));
    assert.equal(errors.length, 1, JSON.stringify(errors));
    assert.equal(errors[0].range.start.line, line);
    assert.match(errors[0].message, /strin/);
    // Requests to its services are not called unknown while the build is broken.
    const rpcUri = pathToFileURL(join(dir, "broken.rpc")).href;
    client.open(rpcUri, "###\n# @reflect false\nhttp://127.0.0.1:9/acme.v1.ShopService/PlaceOrder\n");
    const broken = await client.diagnosticsFor(rpcUri, 1);
    const info = find(
      broken,
      'service "acme.v1.ShopService" is not in the schema, but the schema is incomplete',
    );
    assert.equal(info.severity, 3);
    assert.match(info.message, /compiling .* failed/);

    writeFileSync(protoPath, shopProto);
    void client.connection.sendNotification("workspace/didChangeWatchedFiles", {
      changes: [{ uri: protoUri, type: 2 }],
    });
    while (latest()?.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(latest(), []);
  });
});
