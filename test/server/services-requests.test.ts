// The Services view's requests over a real LSP connection: the sources of a workspace (builds, a
// failing build, a descriptor-set file) and of servers (reflection with headers, an unreachable one,
// a bad URL), each level of their trees, and the text of a new request. Also: for a request in an
// .rpc file, the workspace's schema comes before reflection of its URL.
import assert from "node:assert/strict";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { parseRpcFile } from "../../src/core/rpcfile/parse";
import { DemoService } from "../../src/gen/demo/v1/demo_pb";
import type {
  ServiceChildrenParams,
  ServiceChildrenResult,
  ServiceNode,
  ServiceRequestTextResult,
  ServiceServer,
  ServiceSourcesResult,
} from "../../src/server/protocol";
import { bufPath } from "../support/buf";
import { type DemoServer, demoDescriptorSet, startDemoServer, startTlsDemoServer } from "../support/servers";
import { createTestPki, type TestPki } from "../support/tls";
import { LspClient } from "./lsp-client";
import { annotationsProto, shopProto } from "./workspace";

const localGreet = `syntax = "proto3";

package demo.v1;

// The workspace's own GreetService.
service GreetService {
  rpc Greet(GreetRequest) returns (GreetResponse);
}

message GreetRequest {
  string name = 1;
  string local_only = 2;
}

message GreetResponse {
  string greeting = 1;
}
`;

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function byKind<K extends ServiceNode["kind"]>(
  nodes: ServiceNode[],
  kind: K,
): Extract<ServiceNode, { kind: K }>[] {
  return nodes.filter((n): n is Extract<ServiceNode, { kind: K }> => n.kind === kind);
}

describe("Services view requests", { timeout: 120_000 }, () => {
  let dir: string;
  let demo: DemoServer;
  let tlsDemo: DemoServer;
  let pki: TestPki;
  let client: LspClient;
  let deadUrl: string;

  const write = (rel: string, text: string) => {
    const path = join(dir, rel);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
  };
  const children = async (params: ServiceChildrenParams) =>
    client.request<ServiceChildrenResult>("protocall/serviceChildren", params);
  const sources = (servers: ServiceServer[] = []) =>
    client.request<ServiceSourcesResult>("protocall/serviceSources", { servers }, 60_000);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "protocall-services-"));
    write("api/buf.yaml", "version: v2\nmodules:\n  - path: proto\n");
    write("api/proto/acme/v1/annotations.proto", annotationsProto);
    write("api/proto/acme/v1/shop.proto", shopProto);
    write("broken/buf.yaml", "version: v2\n");
    write("broken/bad/v1/bad.proto", 'syntax = "proto3";\npackage bad.v1;\nmessage Bad { strin x = 1; }\n');
    write("local/buf.yaml", "version: v2\n");
    write("local/demo/v1/greet_local.proto", localGreet);
    mkdirSync(join(dir, "sets"));
    copyFileSync(await demoDescriptorSet(), join(dir, "sets/demo.binpb"));
    pki = await createTestPki(["localhost", "127.0.0.1"]);
    [demo, tlsDemo] = await Promise.all([
      startDemoServer(),
      startTlsDemoServer(pki, { requestClientCert: true }),
    ]);
    deadUrl = `http://127.0.0.1:${await closedPort()}`;
    client = await LspClient.start({
      rootDir: dir,
      initializationOptions: { bufPath, reflectionTimeoutMs: 5000 },
    });
  });

  after(async () => {
    await client?.close();
    await Promise.all([demo?.close(), tlsDemo?.close()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
    if (pki) rmSync(pki.dir, { recursive: true, force: true });
  });

  it("lists the workspace's builds and descriptor sets, then the servers, with errors for those that fail", async () => {
    const { sources: list } = await sources([{ url: demo.url, name: "Demo" }, { url: "localhost:8080" }]);
    assert.deepEqual(
      list.map((s) => [s.kind, s.label, s.id]),
      [
        ["workspace-build", "api", `build:${join(dir, "api")}`],
        ["workspace-build", "broken", `build:${join(dir, "broken")}`],
        ["workspace-build", "local", `build:${join(dir, "local")}`],
        ["descriptor-set", "sets/demo.binpb", `set:${join(dir, "sets/demo.binpb")}`],
        ["server", "Demo", `server:${demo.url}`],
        ["server", "localhost:8080", "server:localhost:8080"],
      ],
    );
    assert.equal(list[0].error, undefined);
    assert.match(list[1].error ?? "", /bad\.proto/);
    assert.match(list[1].error ?? "", /Problems panel/);
    assert.equal(list[3].error, undefined);
    assert.equal(list[4].error, undefined);
    assert.match(list[5].error ?? "", /must start with http:\/\/ or https:\/\//);
  });

  it("lists a workspace build's packages, services (with comments and definitions) and methods", async () => {
    const source = `build:${join(dir, "api")}`;
    const packages = await children({ source });
    assert.equal(packages.error, undefined);
    assert.deepEqual(packages.children, [{ kind: "package", name: "acme.v1", serviceCount: 1 }]);

    const services = byKind(
      (await children({ source, parent: { kind: "package", name: "acme.v1" } })).children,
      "service",
    );
    assert.equal(services.length, 1);
    const shop = services[0];
    assert.equal(shop.name, "acme.v1.ShopService");
    assert.equal(shop.label, "ShopService");
    assert.equal(shop.comment, "ShopService sells things.");
    const shopUri = pathToFileURL(join(dir, "api/proto/acme/v1/shop.proto")).href;
    const lines = shopProto.split("\n");
    const serviceLine = lines.findIndex((l) => l.startsWith("service ShopService"));
    assert.deepEqual(shop.location, {
      uri: shopUri,
      range: { start: { line: serviceLine, character: 8 }, end: { line: serviceLine, character: 19 } },
    });

    const methods = byKind(
      (await children({ source, parent: { kind: "service", name: shop.name } })).children,
      "method",
    );
    assert.deepEqual(
      methods.map((m) => [m.label, m.streaming, m.input, m.output, m.deprecated ?? false]),
      [
        ["PlaceOrder", "unary", "acme.v1.OrderRequest", "acme.v1.OrderResponse", false],
        ["Watch", "server_streaming", "acme.v1.OrderRequest", "acme.v1.OrderResponse", false],
        ["Upload", "client_streaming", "acme.v1.OrderRequest", "acme.v1.OrderResponse", false],
        ["OldPlace", "unary", "acme.v1.OrderRequest", "acme.v1.OrderResponse", true],
      ],
    );
    const place = methods[0];
    assert.equal(place.name, "acme.v1.ShopService.PlaceOrder");
    assert.equal(place.service, "acme.v1.ShopService");
    assert.equal(place.comment, "PlaceOrder places one order.");
    assert.equal(place.idempotency, "idempotent");
    const watchLine = lines.findIndex((l) => l.includes("rpc Watch("));
    assert.equal(methods[1].location?.uri, shopUri);
    assert.deepEqual(methods[1].location?.range.start, {
      line: watchLine,
      character: lines[watchLine].indexOf("Watch"),
    });
  });

  it("lists a descriptor-set file's services, with a bidi method", async () => {
    const source = `set:${join(dir, "sets/demo.binpb")}`;
    const packages = await children({ source });
    assert.deepEqual(packages.children, [{ kind: "package", name: "demo.v1", serviceCount: 2 }]);
    const services = byKind(
      (await children({ source, parent: { kind: "package", name: "demo.v1" } })).children,
      "service",
    );
    assert.deepEqual(
      services.map((s) => s.label),
      ["DemoService", "GreetService"],
    );
    const methods = byKind(
      (await children({ source, parent: { kind: "service", name: "demo.v1.DemoService" } })).children,
      "method",
    );
    const chat = methods.find((m) => m.label === "Chat");
    assert.equal(chat?.streaming, "bidi_streaming");
    assert.equal(methods.find((m) => m.label === "Count")?.streaming, "server_streaming");
    assert.equal(methods.find((m) => m.label === "Sum")?.streaming, "client_streaming");
  });

  it("says why a failing build has no children", async () => {
    const r = await children({ source: `build:${join(dir, "broken")}` });
    assert.deepEqual(r.children, []);
    assert.match(r.error ?? "", /bad\.proto:3/);
  });

  it("reflects a server with its headers", async () => {
    const server: ServiceServer = { url: demo.url, headers: ["x-reflect-check: from-the-view"] };
    const source = `server:${demo.url}`;
    const packages = await children({ source, server });
    assert.equal(packages.error, undefined);
    assert.ok(packages.children.some((p) => p.kind === "package" && p.name === "demo.v1"));
    const services = byKind(
      (await children({ source, server, parent: { kind: "package", name: "demo.v1" } })).children,
      "service",
    );
    assert.deepEqual(
      services.map((s) => s.name),
      ["demo.v1.DemoService", "demo.v1.GreetService"],
    );
    const methods = byKind(
      (await children({ source, server, parent: { kind: "service", name: "demo.v1.DemoService" } })).children,
      "method",
    );
    assert.equal(methods.find((m) => m.label === "Count")?.streaming, "server_streaming");
    assert.equal(methods.find((m) => m.label === "Chat")?.streaming, "bidi_streaming");

    const inspect = createClient(
      DemoService,
      createConnectTransport({ baseUrl: demo.url, httpVersion: "1.1" }),
    );
    const r = await inspect.inspect({ reflectionHeaderNames: ["x-reflect-check"] }, { timeoutMs: 5000 });
    assert.deepEqual(
      r.reflectionHeaders.map((h) => [h.name, h.value]),
      [["x-reflect-check", "from-the-view"]],
    );
  });

  it("reflects a server over mutual TLS with its certificate options, and says why not without them", async () => {
    const source = `server:${tlsDemo.url}`;
    const withTls: ServiceServer = {
      url: tlsDemo.url,
      cacert: pki.ca.certPath,
      cert: pki.client.certPath,
      key: pki.client.keyPath,
    };
    const ok = await children({ source, server: withTls });
    assert.equal(ok.error, undefined);
    assert.ok(ok.children.some((p) => p.kind === "package" && p.name === "demo.v1"));

    const untrusted = await children({ source, server: { url: tlsDemo.url } });
    assert.deepEqual(untrusted.children, []);
    assert.match(untrusted.error ?? "", /certificate/i);
    assert.match(untrusted.error ?? "", /TLS options \(protocall\.servers\)/);

    // A new request carries the same options, so it is sent as the server was reflected.
    const text = await client.request<ServiceRequestTextResult>("protocall/serviceRequestText", {
      source,
      server: withTls,
      method: "demo.v1.GreetService.Greet",
      baseUrl: tlsDemo.url,
    });
    const parsed = parseRpcFile(text.text ?? "");
    assert.deepEqual(parsed.diagnostics, []);
    assert.deepEqual(
      parsed.requests[0].options.map((o) => [o.name.text, o.value?.text]),
      [
        ["cacert", pki.ca.certPath],
        ["cert", pki.client.certPath],
        ["key", pki.client.keyPath],
      ],
    );

    const missing = await children({ source, server: { url: tlsDemo.url, cacert: "no-such-ca.pem" } });
    assert.match(missing.error ?? "", /no-such-ca\.pem: cannot read the file/);
  });

  it("says how to fix an unreachable server", async () => {
    const r = await children({ source: `server:${deadUrl}`, server: { url: deadUrl } });
    assert.deepEqual(r.children, []);
    assert.match(r.error ?? "", new RegExp(`reflection at ${deadUrl.replace(/\./g, "\\.")}`));
    // The refused connection is the reason given, not the reflection timeout running out.
    assert.match(r.error ?? "", /connection refused/);
    assert.match(r.error ?? "", /Check that the server is running/);
  });

  it("writes a new request for a method: comments, URL, skeleton; a server's protocol and headers", async () => {
    const local = await client.request<ServiceRequestTextResult>("protocall/serviceRequestText", {
      source: `build:${join(dir, "api")}`,
      method: "acme.v1.ShopService.PlaceOrder",
      baseUrl: "{{host}}",
    });
    assert.equal(local.error, undefined);
    const text = local.text ?? "";
    assert.match(
      text,
      /^### PlaceOrder\n# PlaceOrder places one order\.\n\{\{host\}\}\/acme\.v1\.ShopService\/PlaceOrder\n\n\{\n/,
    );
    assert.match(text, /"shipTo": \{/);
    const parsed = parseRpcFile(`@host = http://localhost:8080\n\n${text}`);
    assert.deepEqual(parsed.diagnostics, []);
    assert.equal(parsed.requests.length, 1);

    const server: ServiceServer = { url: demo.url, protocol: "grpc", headers: ["x-team: blue"] };
    const remote = await client.request<ServiceRequestTextResult>("protocall/serviceRequestText", {
      source: `server:${demo.url}`,
      server,
      method: "demo.v1.GreetService.Greet",
      baseUrl: demo.url,
    });
    assert.equal(remote.error, undefined);
    const r = parseRpcFile(remote.text ?? "");
    assert.deepEqual(r.diagnostics, []);
    const req = r.requests[0];
    assert.equal(req.url?.text, `${demo.url}/demo.v1.GreetService/Greet`);
    assert.deepEqual(
      req.options.map((o) => [o.name.text, o.value?.text]),
      [["protocol", "grpc"]],
    );
    assert.deepEqual(
      req.headers.map((h) => [h.name.text, h.value.text]),
      [["x-team", "blue"]],
    );
    assert.equal(req.body.length, 1);

    const missing = await client.request<ServiceRequestTextResult>("protocall/serviceRequestText", {
      source: `build:${join(dir, "api")}`,
      method: "acme.v1.ShopService.Nope",
      baseUrl: "{{host}}",
    });
    assert.match(missing.error ?? "", /does not define acme\.v1\.ShopService\.Nope/);
  });

  it("answers again after a refresh", async () => {
    await client.request("protocall/refreshSchemas", null);
    const r = await children({ source: `build:${join(dir, "api")}` });
    assert.deepEqual(r.children, [{ kind: "package", name: "acme.v1", serviceCount: 1 }]);
  });

  it("checks a request against reflection of its URL before the workspace, as Send resolves it", async () => {
    // The demo server's GreetRequest has no local_only; the workspace's has. Send takes the server's.
    const text = `###\n${demo.url}/demo.v1.GreetService/Greet\n\n{"name": "x", "localOnly": "y"}\n`;
    const uri = pathToFileURL(join(dir, "order.rpc")).href;
    client.open(uri, text);
    const diagnostics = await client.diagnosticsFor(uri, 1);
    assert.deepEqual(
      diagnostics.map((d) => d.message),
      ['unknown field "localOnly" in message demo.v1.GreetRequest; its fields: name'],
    );
    // Hover still prefers the workspace's comments (reflection carries none).
    const hover = await client.hover(uri, { line: 1, character: demo.url.length + 20 });
    assert.ok(hover);
    assert.match((hover.contents as { value: string }).value, /workspace's own GreetService/);
  });
});
