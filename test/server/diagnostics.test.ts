// Diagnostics over a real LSP connection: the server built into dist/server.js, a workspace built by
// the real buf, and the demo server for reflection.
import assert from "node:assert/strict";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import type { CodeAction, Diagnostic } from "vscode-languageserver-protocol";
import { bufPath } from "../support/buf";
import { type DemoServer, startDemoServer } from "../support/servers";
import { LspClient, positionOf } from "./lsp-client";
import { createWorkspace, shopProto } from "./workspace";

function find(diagnostics: Diagnostic[], text: string): Diagnostic {
  const d = diagnostics.find((x) => x.message.includes(text));
  assert.ok(d, `no diagnostic with "${text}" in:\n${diagnostics.map((x) => x.message).join("\n")}`);
  return d;
}

function rangeOf(text: string, needle: string, nth = 0) {
  const start = positionOf(text, needle, 0, nth);
  return { start, end: { line: start.line, character: start.character + needle.length } };
}

describe("language server diagnostics", { timeout: 120_000 }, () => {
  let dir: string;
  let demo: DemoServer;
  let client: LspClient;

  before(async () => {
    dir = createWorkspace();
    demo = await startDemoServer();
    client = await LspClient.start({ rootDir: dir, initializationOptions: { bufPath } });
  });

  after(async () => {
    await client?.close();
    await demo?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("marks a bad word of a # @load line where it is", async () => {
    const text = "### Greet\n# @load rate=100 duration=10s\n# @load speed=3\nhttp://localhost/a.B/C\n";
    const uri = pathToFileURL(join(dir, "load.rpc")).href;
    client.open(uri, text);
    const diagnostics = await client.diagnosticsFor(uri, 1);
    const bad = diagnostics.filter((d) => d.code === "invalid-load");
    assert.equal(bad.length, 1, diagnostics.map((d) => d.message).join("\n"));
    assert.deepEqual(bad[0].range, { start: { line: 2, character: 8 }, end: { line: 2, character: 15 } });
  });

  it("checks a stub file of protocall mock as stubs, not as requests, and offers Call this stub instead of Send", async () => {
    const text = `### greet
# @match request.name == "x"
/acme.v1.ShopService/PlaceOrder

>>> nope
`;
    const uri = pathToFileURL(join(dir, "stub.rpc")).href;
    client.open(uri, text);
    const diagnostics = await client.diagnosticsFor(uri, 1);
    assert.deepEqual(
      diagnostics.map((d) => [d.message.split(":")[0], d.range.start.line]),
      [['unknown status "nope"', 4]],
    );
    // No "▶ Send" above a stub: it is not a request to send; it is called on the running mock.
    assert.deepEqual(
      (await client.codeLenses(uri)).map((l) => [
        l.range.start.line,
        l.command?.title,
        l.command?.command,
        l.command?.arguments,
      ]),
      [[2, "▶ Call this stub", "protocall.mock.callStub", [uri, 0]]],
    );
  });

  it("checks a stub's request part against the input type and its answers against the output type, with quick fixes", async () => {
    const text = `### order
/acme.v1.ShopService/PlaceOrder

{"iten": "book"}

>>> ok

{"idd": "{{request.item}}"}

### wrong method
/acme.v1.ShopService/PlaceOrdr

>>> ok
`;
    const uri = pathToFileURL(join(dir, "stub-schema.rpc")).href;
    client.open(uri, text);
    const diagnostics = await client.diagnosticsFor(uri, 1);
    const request = find(
      diagnostics,
      'unknown field "iten" in message acme.v1.OrderRequest (did you mean "item"?)',
    );
    assert.deepEqual(request.range, rangeOf(text, '"iten"'));
    const answer = find(
      diagnostics,
      'unknown field "idd" in message acme.v1.OrderResponse (did you mean "id"?)',
    );
    assert.deepEqual(answer.range, rangeOf(text, '"idd"'));
    find(
      diagnostics,
      "the schema has no method acme.v1.ShopService/PlaceOrdr (did you mean acme.v1.ShopService/PlaceOrder?)",
    );
    const actions = await client.request<CodeAction[]>("textDocument/codeAction", {
      textDocument: { uri },
      range: answer.range,
      context: { diagnostics: [answer] },
    });
    assert.deepEqual(
      actions.map((a) => [a.title, a.edit?.changes?.[uri]]),
      [['Change to "id"', [{ range: rangeOf(text, '"idd"'), newText: '"id"' }]]],
    );
  });

  it("reports schema problems of the body with exact ranges", async () => {
    const text = `@host = ${demo.url}

### Order
{{host}}/acme.v1.ShopService/PlaceOrder

{"item": "book", "quantity": "two", "color": "COLOR_PURPLE", "legacyCode": "x", "bogus": 1, "card": "1", "voucher": "2", "shipTo": {"stret": "x"}, "counts": {"a": true}, "colors": ["COLOR_GREEN"]}
`;
    const uri = pathToFileURL(join(dir, "body.rpc")).href;
    client.open(uri, text);
    const diagnostics = await client.diagnosticsFor(uri, 1);

    const bogus = find(diagnostics, 'unknown field "bogus" in message acme.v1.OrderRequest');
    assert.deepEqual(bogus.range, rangeOf(text, '"bogus"'));
    assert.equal(bogus.severity, 1);

    const quantity = find(diagnostics, "expected an integer for a int32 field");
    assert.deepEqual(quantity.range, rangeOf(text, '"two"'));

    const color = find(diagnostics, 'unknown value "COLOR_PURPLE" of enum acme.v1.Color');
    assert.deepEqual(color.range, rangeOf(text, '"COLOR_PURPLE"'));
    assert.match(color.message, /COLOR_RED/);

    const legacy = find(diagnostics, "acme.v1.OrderRequest.legacy_code is deprecated");
    assert.equal(legacy.severity, 4);
    assert.deepEqual(legacy.tags, [2]);
    assert.deepEqual(legacy.range, rangeOf(text, '"legacyCode"'));

    const green = find(diagnostics, "enum value acme.v1.Color.COLOR_GREEN is deprecated");
    assert.equal(green.severity, 4);
    assert.deepEqual(green.tags, [2]);
    assert.deepEqual(green.range, rangeOf(text, '"COLOR_GREEN"'));

    const oneof = find(diagnostics, "are both in oneof payment");
    assert.deepEqual(oneof.range, rangeOf(text, '"voucher"'));

    const nested = find(
      diagnostics,
      'unknown field "stret" in message acme.v1.Address (did you mean "street"?)',
    );
    assert.deepEqual(nested.range, rangeOf(text, '"stret"'));

    const map = find(diagnostics, "expected an integer");
    assert.ok(map);
    const mapValue = diagnostics.find((d) => d.message.includes("found true"));
    assert.ok(mapValue);
    assert.deepEqual(mapValue.range, rangeOf(text, "true"));
  });

  it("reports unknown services and methods with the closest names, deprecated methods and extra documents", async () => {
    const text = `@host = ${demo.url}

### Typo in the service
{{host}}/acme.v1.ShopServic/PlaceOrder

### Typo in the method
{{host}}/acme.v1.ShopService/PlaceOrdr

### Deprecated
{{host}}/acme.v1.ShopService/OldPlace

{"item": "a"}

### Two documents for a unary method
{{host}}/acme.v1.ShopService/PlaceOrder

{"item": "a"}
{"item": "b"}

### Two documents for a client stream are fine
{{host}}/acme.v1.ShopService/Upload

{"item": "a"}
{"item": "b"}
`;
    const uri = pathToFileURL(join(dir, "names.rpc")).href;
    client.open(uri, text);
    const diagnostics = await client.diagnosticsFor(uri, 1);

    const service = find(
      diagnostics,
      'unknown service "acme.v1.ShopServic"; did you mean "acme.v1.ShopService"?',
    );
    assert.deepEqual(service.range, rangeOf(text, "acme.v1.ShopServic"));

    const method = find(
      diagnostics,
      'unknown method "PlaceOrdr" of service acme.v1.ShopService; did you mean "PlaceOrder"?',
    );
    assert.deepEqual(method.range, rangeOf(text, "PlaceOrdr"));

    const deprecated = find(diagnostics, "method acme.v1.ShopService.OldPlace is deprecated");
    assert.equal(deprecated.severity, 4);
    assert.deepEqual(deprecated.tags, [2]);
    assert.deepEqual(deprecated.range, rangeOf(text, "OldPlace"));

    const extra = find(diagnostics, "PlaceOrder is a unary method: it takes exactly one request message");
    assert.deepEqual(extra.range, rangeOf(text, '{"item": "b"}', 0));
    assert.equal(diagnostics.filter((d) => d.message.includes("takes exactly one")).length, 1);
  });

  it("reports parse errors, option values, undefined variables and unreadable schemas", async () => {
    const text = `@host = ${demo.url}

### Options
# @timeot 5s
# @connect-timeout abc
# @schema ./missing.binpb
{{host}}/acme.v1.ShopService/PlaceOrder
x-token: {{nope}}

{"item": }
`;
    const uri = pathToFileURL(join(dir, "parse.rpc")).href;
    client.open(uri, text);
    const diagnostics = await client.diagnosticsFor(uri, 1);

    const option = find(diagnostics, "unknown request option @timeot (did you mean @timeout?)");
    assert.deepEqual(option.range, rangeOf(text, "timeot"));
    const value = diagnostics.find((d) => d.range.start.line === 4 && d.severity === 1);
    assert.ok(value, "the bad @connect-timeout value is reported");
    assert.deepEqual(value.range, rangeOf(text, "abc"));
    const variable = find(diagnostics, "undefined variable {{nope}}");
    assert.deepEqual(variable.range, rangeOf(text, "{{nope}}"));
    find(diagnostics, "invalid JSON");
    const schema = find(
      diagnostics,
      `cannot load the schema from ./missing.binpb: schema ${join(dir, "missing.binpb")} does not exist`,
    );
    assert.equal(schema.severity, 1);
    assert.deepEqual(schema.range, rangeOf(text, "./missing.binpb"));
  });

  it("checks included JSON files against the input message", async () => {
    writeFileSync(join(dir, "order.json"), '{\n  "item": "a",\n  "quantiti": 2\n}\n');
    const text = `###\n${demo.url}/acme.v1.ShopService/PlaceOrder\n\n< ./order.json\n`;
    const uri = pathToFileURL(join(dir, "include.rpc")).href;
    client.open(uri, text);
    const diagnostics = await client.diagnosticsFor(uri, 1);
    const d = find(
      diagnostics,
      './order.json:3:3: unknown field "quantiti" in message acme.v1.OrderRequest (did you mean "quantity"?)',
    );
    assert.deepEqual(d.range, rangeOf(text, "./order.json"));
  });

  it("takes the schema from server reflection when the workspace does not have the service", async () => {
    const text = `### Greet
${demo.url}/demo.v1.GreetService/Greet

{"nam": "world"}
`;
    const uri = pathToFileURL(join(dir, "reflect.rpc")).href;
    client.open(uri, text);
    const diagnostics = await client.diagnosticsFor(uri, 1);
    const d = find(diagnostics, 'unknown field "nam" in message demo.v1.GreetRequest (did you mean "name"?)');
    assert.deepEqual(d.range, rangeOf(text, '"nam"'));
  });

  it("checks each new version, drops stale results, and rebuilds when .proto files change", async () => {
    const uri = pathToFileURL(join(dir, "typing.rpc")).href;
    const body = (b: string) => `### T\n${demo.url}/acme.v1.ShopService/PlaceOrder\n\n${b}\n`;
    client.open(uri, body('{"gift": true}'));
    let diagnostics = await client.diagnosticsFor(uri, 1);
    find(diagnostics, 'unknown field "gift"');
    // Quick edits: only the last version's diagnostics count.
    for (let v = 2; v <= 6; v++) client.change(uri, body(`{"item": ${v}}`), v);
    diagnostics = await client.diagnosticsFor(uri, 6);
    find(diagnostics, "expected a string for a string field, found the number 6");
    const versions = client.published(uri).map((p) => p.version ?? 0);
    assert.equal(versions[versions.length - 1], 6);
    assert.deepEqual(
      versions,
      [...versions].sort((x, y) => x - y),
      "results of older versions never follow newer ones",
    );

    // Add the field to the .proto file and tell the server.
    writeFileSync(
      join(dir, "proto/acme/v1/shop.proto"),
      shopProto.replace(
        "map<string, int64> counts = 9;",
        "map<string, int64> counts = 9;\n  bool gift = 10;",
      ),
    );
    void client.connection.sendNotification("workspace/didChangeWatchedFiles", {
      changes: [{ uri: pathToFileURL(join(dir, "proto/acme/v1/shop.proto")).href, type: 2 }],
    });
    client.change(uri, body('{"gift": true}'), 7);
    diagnostics = await client.diagnosticsFor(uri, 7);
    assert.deepEqual(diagnostics, []);
  });

  it("survives any text", async () => {
    const uri = pathToFileURL(join(dir, "garbage.rpc")).href;
    const garbage = `### \u0000\n{{\n# @\nGRPC {{x}}/a.B/C\n:\n\n{"a": [[[{"b": {{c}}, "d": "\\u12"}]]], 1, "x\n[}{]\n`;
    client.open(uri, garbage);
    const diagnostics = await client.diagnosticsFor(uri, 1);
    assert.ok(diagnostics.length > 0);
    for (let i = 0; i < garbage.length; i += 3) {
      const before = garbage.slice(0, i);
      const p = { line: before.split("\n").length - 1, character: i - (before.lastIndexOf("\n") + 1) };
      await client.hover(uri, p);
      await client.completion(uri, p);
    }
    assert.equal(client.stderr.join(""), "");
  });
});
