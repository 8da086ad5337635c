// `@assert` and `@capture` in the language server over a real LSP connection: diagnostics against the
// method's output type (a workspace built by the real buf), quick fixes, completion and hover.
import assert from "node:assert/strict";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import type {
  CodeAction,
  CompletionItem,
  Diagnostic,
  Hover,
  MarkupContent,
  Position,
} from "vscode-languageserver-protocol";
import { bufPath } from "../support/buf";
import { repoRoot } from "../support/cli";
import { LspClient, positionOf } from "./lsp-client";
import { createWorkspace } from "./workspace";

const checkProto = `syntax = "proto3";

package acme.v1;

import "google/protobuf/timestamp.proto";

// CheckService answers questions.
service CheckService {
  // Look finds a thing.
  rpc Look(LookRequest) returns (LookResponse);
  // Watch streams what changes.
  rpc Watch(LookRequest) returns (stream LookResponse);
}

message LookRequest {
  string id = 1;
}

// LookResponse is what Look finds.
message LookResponse {
  // The display name, such as "Ada".
  string full_name = 1;
  // Items ever bought.
  int64 total = 2;
  State state = 3;
  repeated Item items = 4;
  map<string, int32> counts = 5;
  google.protobuf.Timestamp seen_at = 6;
  bool active = 7;
}

// State of a thing.
enum State {
  STATE_UNSPECIFIED = 0;
  // Still around.
  STATE_ACTIVE = 1;
  STATE_GONE = 2;
}

message Item {
  // Stock keeping unit.
  string sku = 1;
  int32 quantity = 2;
}
`;

const host = "http://127.0.0.1:1";

function find(diagnostics: Diagnostic[], text: string): Diagnostic {
  const d = diagnostics.find((x) => x.message.includes(text));
  assert.ok(d, `no diagnostic with "${text}" in:\n${diagnostics.map((x) => x.message).join("\n")}`);
  return d;
}

function rangeOf(text: string, needle: string, nth = 0) {
  const start = positionOf(text, needle, 0, nth);
  return { start, end: { line: start.line, character: start.character + needle.length } };
}

function markdown(h: Hover | null): string {
  assert.ok(h, "a hover");
  return (h.contents as MarkupContent).value;
}

function labels(items: CompletionItem[]): string[] {
  return items.map((i) => i.label);
}

describe("@assert and @capture in the language server", { timeout: 120_000 }, () => {
  let dir: string;
  let client: LspClient;
  let version = 0;

  before(async () => {
    dir = createWorkspace();
    writeFileSync(join(dir, "proto/acme/v1/check.proto"), checkProto);
    client = await LspClient.start({ rootDir: dir, initializationOptions: { bufPath, reflection: false } });
  });

  after(async () => {
    await client?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Opens a document and waits for its diagnostics. */
  async function open(name: string, text: string): Promise<{ uri: string; diagnostics: Diagnostic[] }> {
    const uri = pathToFileURL(join(dir, name)).href;
    version++;
    client.open(uri, text, version);
    return { uri, diagnostics: await client.diagnosticsFor(uri, version) };
  }

  async function complete(text: string, at: Position): Promise<CompletionItem[]> {
    const { uri } = await open(`complete-${version}.rpc`, text);
    return client.completion(uri, at);
  }

  it("checks paths and values against the output type; valid ones have no diagnostics", async () => {
    const text = `### Look
# @assert status == ok
# @assert message.fullName == "Ada"
# @assert messages[0].items[*].sku contains "b-1"
# @assert message.total > 3
# @assert message.state == STATE_ACTIVE
# @assert message.counts["apples"] >= 1
# @assert message.seenAt matches /^2026/
# @assert error.details[google.rpc.BadRequest].fieldViolations[0].field == "id"
# @capture name = message.fullName
${host}/acme.v1.CheckService/Look

{"id": "1"}

### Mistakes
# @assert message.fullname == "Ada"
# @assert message.full_name exists
# @assert message.state == STATE_GON
# @assert messages.items exists
# @assert message.total isType number
# @assert message.active == "yes"
# @assert error.details[google.rpc.BadReqest] exists
# @capture sku = message.items[0].skus
${host}/acme.v1.CheckService/Look
`;
    const { diagnostics } = await open("check.rpc", text);
    const lookEnd = positionOf(text, "### Mistakes").line;
    assert.deepEqual(
      diagnostics.filter((d) => d.range.start.line < lookEnd).map((d) => d.message),
      [],
    );

    const fullname = find(
      diagnostics,
      'unknown field "fullname" in message acme.v1.LookResponse (did you mean "fullName"?)',
    );
    assert.deepEqual(fullname.range, rangeOf(text, "fullname"));
    assert.deepEqual(fullname.data, { replacement: "fullName" });
    assert.equal(fullname.code, "unknown-field");
    assert.equal(fullname.severity, 1);

    const protoName = find(
      diagnostics,
      "responses name field acme.v1.LookResponse.full_name by its JSON name: write fullName",
    );
    assert.deepEqual(protoName.range, rangeOf(text, "full_name"));
    assert.deepEqual(protoName.data, { replacement: "fullName" });

    const gone = find(
      diagnostics,
      'unknown value "STATE_GON" of enum acme.v1.State (did you mean STATE_GONE?)',
    );
    assert.deepEqual(gone.range, rangeOf(text, "STATE_GON"));
    assert.deepEqual(gone.data, { replacement: "STATE_GONE" });

    const list = find(diagnostics, "messages is a list of acme.v1.LookResponse: pick an element first");
    assert.deepEqual(list.range, rangeOf(text, ".items", 1));
    assert.deepEqual(list.data, { replacement: "[0].items" });

    const type = find(
      diagnostics,
      "message.total is an int64 (a JSON string): in a response it is a JSON string, so isType number always fails",
    );
    assert.deepEqual(type.range, rangeOf(text, "number", 0));

    find(diagnostics, "message.active is a bool (a JSON boolean), and this value is a JSON string");

    const detail = find(
      diagnostics,
      "error detail type google.rpc.BadReqest is not in the schema (did you mean google.rpc.BadRequest?)",
    );
    assert.equal(detail.severity, 2);
    assert.deepEqual(detail.data, { replacement: "google.rpc.BadRequest" });

    const capture = find(diagnostics, 'unknown field "skus" in message acme.v1.Item (did you mean "sku"?)');
    assert.deepEqual(capture.range, rangeOf(text, "skus"));
    assert.equal(diagnostics.length, 8, diagnostics.map((d) => d.message).join("\n"));
  });

  it("offers the replacement as a quick fix, for assertions, request bodies and methods", async () => {
    const text = `### Typos
# @assert status == NOT_FOUND
${host}/acme.v1.CheckService/Lok

###
# @assert message.fullname exists
${host}/acme.v1.CheckService/Look

{"idd": "1"}
`;
    const { uri, diagnostics } = await open("fix.rpc", text);
    const fixable = diagnostics.filter((d) => d.data);
    const actions = await client.request<CodeAction[]>("textDocument/codeAction", {
      textDocument: { uri },
      range: { start: { line: 0, character: 0 }, end: { line: 11, character: 0 } },
      context: { diagnostics },
    });
    assert.deepEqual(
      actions.map((a) => [a.title, a.kind, a.isPreferred, a.edit?.changes?.[uri]]),
      fixable.map((d) => {
        const newText = (d.data as { replacement: string }).replacement;
        return [`Change to ${newText}`, "quickfix", true, [{ range: d.range, newText }]];
      }),
    );
    assert.deepEqual(
      actions.map((a) => a.title),
      ["Change to not_found", "Change to Look", 'Change to "id"', "Change to fullName"],
    );
    const none = await client.request<CodeAction[]>("textDocument/codeAction", {
      textDocument: { uri },
      range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
      context: { diagnostics, only: ["refactor"] },
    });
    assert.deepEqual(none, []);
  });

  it("a {{variable}} an earlier request captures is fine before the run; one captured later is an error", async () => {
    const text = `### Look
# @capture name = message.fullName
${host}/acme.v1.CheckService/Look

{"id": "{{name}} {{later}}"}

### Use
# @assert message.fullName == "{{name}}"
# @capture later = message.total
${host}/acme.v1.CheckService/Look
x-name: {{name}}

{"id": "{{name}}"}
`;
    const { uri, diagnostics } = await open("chain.rpc", text);
    assert.deepEqual(
      diagnostics.map((d) => [d.code, d.message]),
      [
        [
          "capture-order",
          "{{name}} is captured by this request (line 2), so it has no value before the request runs; capture it in an earlier request",
        ],
        [
          "capture-order",
          '{{later}} is captured by request "Use" (line 9), which comes after this one; move that request before this one',
        ],
      ],
    );
    const h = markdown(await client.hover(uri, positionOf(text, "{{name}}", 3, 2)));
    assert.equal(h, "Captured by request `Look` (line 2): it has a value once that request has run");
    const items = await client.completion(uri, positionOf(text, "x-name: {{", 10));
    const name = items.find((i) => i.label === "name");
    assert.equal(name?.detail, "captured by Look");
  });

  it("completes roots, fields by JSON name, members, brackets, operators and values", async () => {
    const base = (line: string) => `### C\n# @${line}\n${host}/acme.v1.CheckService/Look\n`;
    const at = (line: string) => ({ line: 1, character: 3 + line.length });

    const roots = await complete(base("assert "), at("assert "));
    assert.deepEqual(labels(roots), [
      "status",
      "message",
      "messages",
      "headers",
      "trailers",
      "error",
      "duration",
    ]);

    const fields = await complete(base("assert message."), at("assert message."));
    assert.deepEqual(labels(fields), ["fullName", "total", "state", "items", "counts", "seenAt", "active"]);
    const fullName = fields[0];
    assert.equal(fullName.detail, "string");
    assert.match((fullName.documentation as MarkupContent).value, /The display name, such as "Ada"\./);
    assert.deepEqual(fullName.textEdit, {
      range: { start: at("assert message."), end: at("assert message.") },
      newText: "fullName",
    });

    const partial = await complete(base("assert message.fu == 1"), at("assert message.fu"));
    assert.deepEqual((partial[0].textEdit as { range: unknown }).range, {
      start: at("assert message."),
      end: at("assert message.fu"),
    });

    assert.deepEqual(
      labels(await complete(base("assert messages[0].items[0]."), at("assert messages[0].items[0]."))),
      ["sku", "quantity"],
    );
    assert.deepEqual(labels(await complete(base("assert messages."), at("assert messages."))), ["length"]);
    assert.deepEqual(labels(await complete(base("assert error."), at("assert error."))), [
      "code",
      "message",
      "details",
    ]);
    assert.deepEqual(labels(await complete(base("assert messages["), at("assert messages["))), [
      "0",
      "-1",
      "*",
    ]);
    const details = await complete(base("assert error.details["), at("assert error.details["));
    assert.ok(labels(details).includes("google.rpc.BadRequest"), labels(details).join());
    const badRequest = details.find((i) => i.label === "google.rpc.BadRequest");
    assert.equal(
      (badRequest?.textEdit as { newText: string } | undefined)?.newText,
      "google.rpc.BadRequest]",
    );
    assert.deepEqual(
      labels(
        await complete(
          base("assert error.details[google.rpc.BadRequest]."),
          at("assert error.details[google.rpc.BadRequest]."),
        ),
      ),
      ["fieldViolations"],
    );
    assert.deepEqual(
      labels(await complete(base("capture t = message.items[0]."), at("capture t = message.items[0]."))),
      ["sku", "quantity"],
    );

    const ops = await complete(base("assert message.total "), at("assert message.total "));
    assert.deepEqual(labels(ops), [
      "==",
      "!=",
      "<",
      "<=",
      ">",
      ">=",
      "contains",
      "!contains",
      "matches",
      "!matches",
      "exists",
      "!exists",
      "isType",
    ]);

    assert.deepEqual(
      labels(await complete(base("assert message.state == "), at("assert message.state == "))),
      ["STATE_UNSPECIFIED", "STATE_ACTIVE", "STATE_GONE"],
    );
    assert.deepEqual(
      labels(await complete(base("assert message.active != "), at("assert message.active != "))),
      ["true", "false"],
    );
    const codes = labels(await complete(base("assert status == "), at("assert status == ")));
    assert.deepEqual(codes.slice(0, 3), ["ok", "canceled", "unknown"]);
    assert.equal(codes.length, 17);
    assert.deepEqual(labels(await complete(base("assert message isType "), at("assert message isType "))), [
      "string",
      "number",
      "boolean",
      "object",
      "array",
      "null",
    ]);
    const options = labels(await complete(base("as"), at("as")));
    assert.ok(options.includes("assert") && options.includes("capture"));
  });

  it("hovers the option, the root, fields with their docs, detail types, operators and enum values", async () => {
    const text = `### H
# @assert messages[0].items[-1].sku == "x"
# @assert error.details[google.rpc.BadRequest].fieldViolations exists
# @assert message.state == STATE_ACTIVE
# @capture who = message.fullName
${host}/acme.v1.CheckService/Look
`;
    const { uri } = await open("hover.rpc", text);
    assert.match(
      markdown(await client.hover(uri, positionOf(text, "@assert", 2))),
      /^\*\*@assert\*\* `<path> <operator> \[value\]`/,
    );
    const root = await client.hover(uri, positionOf(text, "messages", 2));
    assert.match(markdown(root), /^`messages` — Every response message as proto JSON/);
    assert.deepEqual(root?.range, rangeOf(text, "messages"));
    const sku = await client.hover(uri, positionOf(text, "sku", 1));
    assert.match(markdown(sku), /\*\*field\*\* `acme\.v1\.Item\.sku`/);
    assert.match(markdown(sku), /Stock keeping unit\\\./);
    assert.deepEqual(sku?.range, rangeOf(text, "sku"));
    assert.match(
      markdown(await client.hover(uri, positionOf(text, "[0]", 1))),
      /^`messages\[0\]` — a message acme\\\.v1\\\.LookResponse$/,
    );
    assert.match(
      markdown(await client.hover(uri, positionOf(text, "BadRequest", 2))),
      /\*\*message\*\* `google\.rpc\.BadRequest`/,
    );
    assert.match(
      markdown(await client.hover(uri, positionOf(text, "fieldViolations", 2))),
      /`google\.rpc\.BadRequest\.field_violations`/,
    );
    assert.match(
      markdown(await client.hover(uri, positionOf(text, '== "x"', 0))),
      /^`==` — Equal as JSON values/,
    );
    const active = markdown(await client.hover(uri, positionOf(text, "STATE_ACTIVE", 3)));
    assert.match(active, /enum value\*\* `acme\.v1\.State\.STATE_ACTIVE`/);
    assert.match(active, /Still around\\\./);
    assert.match(markdown(await client.hover(uri, positionOf(text, "fullName", 2))), /The display name/);
    assert.equal(
      markdown(await client.hover(uri, positionOf(text, "who", 1))),
      "Captured as `{{who}}` for the requests after this one: the value at `message.fullName`.",
    );
  });

  it("the README's example has no diagnostics against the demo schema", async () => {
    const examples = mkdtempSync(join(tmpdir(), "protocall-examples-"));
    cpSync(join(repoRoot, "examples/proto"), join(examples, "proto"), { recursive: true });
    cpSync(join(repoRoot, "examples/buf.yaml"), join(examples, "buf.yaml"));
    const other = await LspClient.start({
      rootDir: examples,
      initializationOptions: { bufPath, reflection: false },
    });
    try {
      const readme = readFileSync(join(repoRoot, "README.md"), "utf8");
      const section = readme.slice(readme.indexOf("## Request files that test themselves"));
      const example = /```\n([\s\S]*?)```/.exec(section)?.[1];
      assert.ok(example);
      const uri = pathToFileURL(join(examples, "readme.rpc")).href;
      other.open(uri, example);
      assert.deepEqual(await other.diagnosticsFor(uri, 1), []);
      // And the schema is really checked there: a typo is found.
      other.change(uri, example.replace("message.greeting ==", "message.greting =="), 2);
      const typo = await other.diagnosticsFor(uri, 2);
      assert.deepEqual(
        typo.map((d) => d.message),
        [
          'unknown field "greting" in message demo.v1.GreetResponse (did you mean "greeting"?); its fields: greeting',
        ],
      );
    } finally {
      await other.close();
      rmSync(examples, { recursive: true, force: true });
    }
  });
});
