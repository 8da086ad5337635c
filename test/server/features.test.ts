// Hover, completion, code lenses and document symbols over a real LSP connection.
import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import type { CompletionItem, Hover, MarkupContent } from "vscode-languageserver-protocol";
import { bufPath } from "../support/buf";
import { type DemoServer, startDemoServer } from "../support/servers";
import { LspClient, positionOf } from "./lsp-client";
import { createWorkspace } from "./workspace";

function markdown(h: Hover | null): string {
  assert.ok(h, "a hover");
  return (h.contents as MarkupContent).value;
}

function labels(items: CompletionItem[]): string[] {
  return items.map((i) => i.label);
}

describe("language server features", { timeout: 120_000 }, () => {
  let dir: string;
  let demo: DemoServer;
  let client: LspClient;
  let uri: string;
  let text: string;

  before(async () => {
    dir = createWorkspace();
    demo = await startDemoServer();
    client = await LspClient.start({
      rootDir: dir,
      configuration: { bufPath, reflection: true },
    });
    text = `@host = ${demo.url}

### Place an order
# @protocol grpc
{{host}}/acme.v1.ShopService/PlaceOrder
Authorization: Bearer x

{"item": "book", "color": "COLOR_RED", "shipTo": {"city": "Oslo"}, "colors": ["COLOR_BLUE"]}

###
# @name Greet
${demo.url}/demo.v1.GreetService/Greet

{"name": "world"}
`;
    uri = pathToFileURL(join(dir, "shop.rpc")).href;
    client.open(uri, text);
    await client.diagnosticsFor(uri, 1);
  });

  after(async () => {
    await client?.close();
    await demo?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("hovers the method in the URL: name, streaming kind, types, comments and options", async () => {
    const value = markdown(await client.hover(uri, positionOf(text, "PlaceOrder", 3)));
    assert.match(value, /\*\*unary method\*\* `acme\.v1\.ShopService\.PlaceOrder`/);
    assert.match(value, /`acme\.v1\.OrderRequest` → `acme\.v1\.OrderResponse`/);
    assert.match(value, /PlaceOrder places one order\\\./);
    assert.match(value, /idempotency_level = IDEMPOTENT/);
    assert.match(value, /\(acme\.v1\.audit\) = "orders"/);
  });

  it("hovers the service in the URL", async () => {
    const value = markdown(await client.hover(uri, positionOf(text, "ShopService/", 2)));
    assert.match(value, /\*\*service\*\* `acme\.v1\.ShopService` — 4 methods/);
    assert.match(value, /ShopService sells things\\\./);
  });

  it("hovers a JSON key: comments, number, type, label, json_name and options", async () => {
    const h = await client.hover(uri, positionOf(text, '"item"', 2));
    const value = markdown(h);
    assert.match(value, /\*\*field\*\* `acme\.v1\.OrderRequest\.item`/);
    assert.match(value, /number 1 · type `string`/);
    assert.match(value, /JSON `item`/);
    assert.match(value, /The item's name, such as "book"\\\./);
    assert.match(value, /debug_redact = true/);
    assert.match(value, /\(acme\.v1\.sensitive\) = true/);
    assert.deepEqual(h?.range, {
      start: positionOf(text, '"item"'),
      end: positionOf(text, '"item"', 6),
    });
    const nested = markdown(await client.hover(uri, positionOf(text, '"city"', 1)));
    assert.match(nested, /`acme\.v1\.Address\.city`/);
  });

  it("hovers an enum value in a body, also inside a list", async () => {
    const red = markdown(await client.hover(uri, positionOf(text, "COLOR_RED", 2)));
    assert.match(red, /enum value\*\* `acme\.v1\.Color\.COLOR_RED`/);
    assert.match(red, /Red like a fire truck\\\./);
    assert.match(red, /\(acme\.v1\.label\) = "red"/);
    const blue = markdown(await client.hover(uri, positionOf(text, "COLOR_BLUE", 2)));
    assert.match(blue, /`acme\.v1\.Color\.COLOR_BLUE`/);
  });

  it("hovers a field of a schema from reflection and a request option", async () => {
    const value = markdown(await client.hover(uri, positionOf(text, '"name"', 2)));
    assert.match(value, /`demo\.v1\.GreetRequest\.name`/);
    const option = markdown(await client.hover(uri, positionOf(text, "protocol grpc", 2)));
    assert.match(option, /\*\*@protocol\*\*/);
    assert.equal(await client.hover(uri, positionOf(text, "Bearer")), null);
  });

  it("hovers variable references", async () => {
    const h = await client.hover(uri, positionOf(text, "{{host}}", 3));
    assert.equal(markdown(h), `File variable \`@host\` = \`${demo.url}\` (line 1)`);
    assert.deepEqual(h?.range, { start: positionOf(text, "{{host}}"), end: positionOf(text, "{{host}}", 8) });
    const sys = `###\n${demo.url}/demo.v1.GreetService/Greet\nx-id: {{$randomInt 1 9}}\n`;
    const sysUri = pathToFileURL(join(dir, "sys.rpc")).href;
    client.open(sysUri, sys);
    const s = await client.hover(sysUri, positionOf(sys, "$randomInt", 2));
    assert.match(markdown(s), /^`\$randomInt MIN MAX` — A random integer from MIN/);
  });

  it("completes and hovers a stub's request part as the input type, its answers as the output type and a detail as its type", async () => {
    const stub = `### order
/acme.v1.ShopService/PlaceOrder

{"shipTo": {"st": "x"}}

>>> not_found "gone"
# @detail google.rpc.ErrorInfo {"rea": "x"}

### answer
/acme.v1.ShopService/PlaceOrder

>>> ok

{"i": "x"}
`;
    const stubUri = pathToFileURL(join(dir, "completion-stub.rpc")).href;
    client.open(stubUri, stub);
    const request = await client.completion(stubUri, positionOf(stub, '"shipTo"', 1));
    assert.ok(labels(request).includes("item"), labels(request).join(", "));
    assert.ok(!labels(request).includes("id"));
    const nested = await client.completion(stubUri, positionOf(stub, '"st"', 1));
    assert.deepEqual(labels(nested).sort(), ["city", "street"]);
    const answer = await client.completion(stubUri, positionOf(stub, '"i"', 1));
    assert.deepEqual(labels(answer), ["id"]);
    const detail = await client.completion(stubUri, positionOf(stub, '"rea"', 1));
    assert.ok(labels(detail).includes("reason"), labels(detail).join(", "));
    // Outside the documents (the >>> line): nothing.
    assert.deepEqual(labels(await client.completion(stubUri, positionOf(stub, ">>> ok", 2))), []);
    // Hover: a key of the request part is a field of the input type, of an answer of the output type.
    assert.match(markdown(await client.hover(stubUri, positionOf(stub, '"shipTo"', 2))), /Where to send it/);
    const answered = stub.replace('{"i": "x"}', '{"id": "x"}');
    client.change(stubUri, answered, 2);
    assert.match(markdown(await client.hover(stubUri, positionOf(answered, '"id"', 2))), /OrderResponse/);
  });

  it("completes request options after # @ and header names", async () => {
    const t2 = `${text}\n### New\n# @ti`;
    client.change(uri, t2, 2);
    const options = await client.completion(uri, positionOf(t2, "# @ti", 5));
    assert.ok(labels(options).includes("timeout"));
    assert.ok(labels(options).includes("name"));
    const timeout = options.find((i) => i.label === "timeout");
    assert.deepEqual(timeout?.textEdit, {
      range: { start: positionOf(t2, "# @ti", 3), end: positionOf(t2, "# @ti", 5) },
      newText: "timeout ",
    });
    const protocols = await client.completion(uri, positionOf(text, "protocol grpc", 11));
    assert.deepEqual(labels(protocols), ["connect", "grpc", "grpcweb"]);
    assert.deepEqual(protocols[1].textEdit, {
      range: { start: positionOf(text, "protocol grpc", 9), end: positionOf(text, "protocol grpc", 13) },
      newText: "grpc",
    });
    const headers = await client.completion(uri, positionOf(text, "Authorization"));
    assert.ok(labels(headers).includes("Authorization"));
    assert.ok(!labels(headers).some((l) => /^(content-type|grpc-timeout)$/i.test(l)));
  });

  it("completes variable references: file variables, environment and system variables", async () => {
    const items = await client.completion(uri, positionOf(text, "{{host}}/acme", 3));
    const host = items.find((i) => i.label === "host");
    assert.equal(host?.detail, demo.url);
    assert.deepEqual(host?.textEdit, {
      range: { start: positionOf(text, "{{host}}/acme", 2), end: positionOf(text, "{{host}}/acme", 6) },
      newText: "host",
    });
    assert.ok(items.some((i) => i.label === "$uuid" && i.documentation));
    assert.equal(items.find((i) => i.label === "$randomInt")?.detail, "$randomInt MIN MAX");
  });

  it("completes services and methods in the URL from the workspace and reflection", async () => {
    const services = await client.completion(uri, positionOf(text, "acme.v1.ShopService/", 3));
    assert.ok(labels(services).includes("acme.v1.ShopService"));
    assert.ok(labels(services).includes("demo.v1.DemoService"), "services from reflection too");
    const methods = await client.completion(uri, positionOf(text, "PlaceOrder", 2));
    assert.deepEqual(labels(methods).sort(), ["OldPlace", "PlaceOrder", "Upload", "Watch"]);
    const place = methods.find((m) => m.label === "PlaceOrder");
    assert.equal(place?.detail, "unary: acme.v1.OrderRequest → acme.v1.OrderResponse");
    assert.deepEqual(methods.find((m) => m.label === "OldPlace")?.tags, [1]);
  });

  it("gives the service list one shared edit range when the client takes item defaults", async () => {
    const other = await LspClient.start({ rootDir: dir, configuration: { bufPath }, itemDefaults: true });
    try {
      const otherUri = pathToFileURL(join(dir, "other.rpc")).href;
      other.open(otherUri, text);
      await other.diagnosticsFor(otherUri, 1);
      const at = positionOf(text, "acme.v1.ShopService/", 3);
      const list = await other.completionList(otherUri, at);
      assert.ok(!Array.isArray(list));
      const start = positionOf(text, "acme.v1.ShopService/");
      assert.deepEqual(list.itemDefaults?.editRange, {
        start,
        end: { line: start.line, character: start.character + "acme.v1.ShopService".length },
      });
      assert.ok(list.items.some((i) => i.label === "acme.v1.ShopService" && i.textEdit === undefined));
    } finally {
      await other.close();
    }
  });

  it('completes field names with type and comment, inserting "name": ', async () => {
    // As typed with the closing quote inserted by the editor: `"qu|"`.
    const t3 = text.replace('{"item": "book", ', '{"item": "book", "qu", ');
    client.change(uri, t3, 3);
    const at = positionOf(t3, '"qu', 3);
    const items = await client.completion(uri, at);
    const quantity = items.find((i) => i.label === "quantity");
    assert.ok(quantity, `fields offered: ${labels(items).join(", ")}`);
    assert.equal(quantity.detail, "int32");
    assert.deepEqual(quantity.documentation, { kind: "markdown", value: "How many to order." });
    assert.deepEqual(quantity.textEdit, {
      range: { start: positionOf(t3, '"qu'), end: positionOf(t3, '"qu"', 4) },
      newText: '"quantity": ',
    });
    assert.ok(!labels(items).includes("item"), "keys already present are not offered");
    assert.equal(items.find((i) => i.label === "counts")?.detail, "map<string, int64>");
    assert.ok(!labels(items).includes("shipTo"));
    assert.deepEqual(items.find((i) => i.label === "legacyCode")?.tags, [1]);
  });

  it("completes enum values and nested message skeletons", async () => {
    const t4 = text
      .replace('"color": "COLOR_RED"', '"color": ')
      .replace('"shipTo": {"city": "Oslo"}', '"shipTo": ');
    client.change(uri, t4, 4);
    const colors = await client.completion(uri, positionOf(t4, '"color": ', 9));
    assert.deepEqual(labels(colors), ['"COLOR_UNSPECIFIED"', '"COLOR_RED"', '"COLOR_BLUE"', '"COLOR_GREEN"']);
    assert.deepEqual(colors[3].tags, [1]);
    const ship = await client.completion(uri, positionOf(t4, '"shipTo": ', 10));
    assert.equal(ship.length, 1);
    assert.equal(ship[0].detail, "skeleton of acme.v1.Address");
    assert.deepEqual(JSON.parse(ship[0].textEdit?.newText ?? ""), { street: "", city: "" });
    const inList = await client.completion(uri, positionOf(t4, "COLOR_BLUE", 3));
    assert.ok(labels(inList).includes('"COLOR_RED"'));
  });

  it("offers a skeleton of the input message where a body starts", async () => {
    const t6 = `${text}\n### New\n${demo.url}/acme.v1.ShopService/PlaceOrder\n\n\n`;
    client.change(uri, t6, 6);
    const lines = t6.split("\n");
    const items = await client.completion(uri, { line: lines.length - 2, character: 0 });
    assert.equal(items.length, 1);
    assert.equal(items[0].detail, "skeleton of acme.v1.OrderRequest");
    const skeleton = JSON.parse(items[0].textEdit?.newText ?? "");
    assert.equal(skeleton.item, "");
    assert.deepEqual(skeleton.shipTo, { street: "", city: "" });
    // Right under the request line, a header is expected instead.
    const header = await client.completion(uri, { line: lines.length - 3, character: 0 });
    assert.ok(labels(header).includes("Authorization"));
  });

  it("puts Send, Load Test and Copy as curl above each request, and one symbol per request", async () => {
    client.change(uri, text, 5);
    const lenses = await client.codeLenses(uri);
    assert.deepEqual(
      lenses.map((l) => [l.range.start.line, l.command?.title, l.command?.command, l.command?.arguments]),
      [
        [2, "▶ Send", "protocall.send", [uri, 0]],
        [2, "Load Test…", "protocall.loadTest", [uri, 0]],
        [2, "Copy as curl", "protocall.copyAsCurl", [uri, 0]],
        [9, "▶ Send", "protocall.send", [uri, 1]],
        [9, "Load Test…", "protocall.loadTest", [uri, 1]],
        [9, "Copy as curl", "protocall.copyAsCurl", [uri, 1]],
      ],
    );
    const symbols = await client.symbols(uri);
    assert.deepEqual(
      symbols.map((s) => [s.name, s.range.start.line]),
      [
        ["Place an order", 2],
        ["Greet", 9],
      ],
    );
  });
});
