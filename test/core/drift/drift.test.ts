// The drift engine on two real workspaces built with the bundled buf: what the element comparison
// finds (pairing by name, then by number), how buf's findings are attached to it, and a finding
// about no element becoming a difference of its own.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Readable } from "node:stream";
import { after, test } from "node:test";
import { compareSides, type Difference, runDrift } from "../../../src/core/drift/drift";
import { openSide } from "../../../src/core/drift/open-side";
import { driftExitCode, formatDriftText } from "../../../src/core/drift/report-text";
import { defaultCurlOptions } from "../../../src/core/invoke/options";

const work = mkdtempSync(join(tmpdir(), "protocall-drift-"));
after(() => rmSync(work, { recursive: true, force: true }));

const BASE = `syntax = "proto3";
package shop.v1;
option go_package = "example.com/shop/v1;shopv1";

message Order {
  string id = 1;
  int32 count = 2;
  string customer_name = 3;
  map<string, int32> quantities = 4;
  Status status = 5;
  message Line {
    string sku = 1;
  }
  repeated Line lines = 6;
}

enum Status {
  STATUS_UNSPECIFIED = 0;
  STATUS_OPEN = 1;
  STATUS_CLOSED = 2;
}

message GetOrderRequest {
  string id = 1;
}

service OrderService {
  rpc GetOrder(GetOrderRequest) returns (Order);
  rpc WatchOrders(GetOrderRequest) returns (stream Order);
}
`;

let n = 0;
function workspace(text: string): string {
  const root = join(work, `ws${n++}`);
  const path = join(root, "shop/v1/shop.proto");
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  return root;
}

const options = () => ({
  cwd: work,
  stdin: Readable.from([]),
  connection: defaultCurlOptions(),
  timeoutMs: 10_000,
});

function edit(from: string, to: string): string {
  assert.ok(BASE.includes(from), from);
  return BASE.replace(from, to);
}

async function drift(input: string, against: string) {
  return runDrift(workspace(input), workspace(against), options());
}

function only(differences: readonly Difference[]): Difference {
  assert.equal(differences.length, 1, JSON.stringify(differences, null, 2));
  return differences[0];
}

test("the same schema: no differences, exit 0", async () => {
  const report = await drift(BASE, BASE);
  assert.deepEqual(report.differences, []);
  assert.equal(report.verdict, "same");
  assert.equal(driftExitCode(report), 0);
  assert.match(formatDriftText(report, work), /^no differences between /);
});

test("a renamed field is one change of name (paired by number), breaking as buf's FIELD_SAME_NAME", async () => {
  const report = await drift(edit("string customer_name = 3;", "string client_name = 3;"), BASE);
  const d = only(report.differences);
  assert.equal(d.change, "changed");
  assert.equal(d.element, "field");
  assert.deepEqual(d.properties, [
    { property: "name", input: "client_name", against: "customer_name" },
    { property: "json name", input: "clientName", against: "customerName" },
  ]);
  assert.equal(d.breaking, true);
  assert.ok(
    d.rules.some((r) => r.rule === "FIELD_SAME_NAME"),
    JSON.stringify(d.rules),
  );
  assert.ok(
    d.rules.some((r) => r.rule === "FIELD_SAME_JSON_NAME"),
    JSON.stringify(d.rules),
  );
  assert.equal(d.against?.line, 8);
  assert.equal(d.input?.line, 8);
  assert.equal(driftExitCode(report), 1);
});

test("a changed type and label", async () => {
  const report = await drift(edit("int32 count = 2;", "repeated int64 count = 2;"), BASE);
  const d = only(report.differences);
  assert.deepEqual(d.properties, [
    { property: "type", input: "int64", against: "int32" },
    { property: "label", input: "repeated", against: "singular" },
  ]);
  assert.equal(d.breaking, true);
  assert.ok(d.rules.some((r) => r.rule === "FIELD_SAME_CARDINALITY" || r.rule === "FIELD_SAME_LABEL"));
});

test("a method's streaming and an enum value's number", async () => {
  const report = await drift(
    edit("returns (stream Order);", "returns (Order);").replace("STATUS_CLOSED = 2;", "STATUS_CLOSED = 3;"),
    BASE,
  );
  const method = report.differences.find((d) => d.element === "method");
  assert.ok(method);
  assert.equal(method.name, "shop.v1.OrderService.WatchOrders");
  assert.deepEqual(method.properties, [{ property: "server streaming", input: "false", against: "true" }]);
  assert.ok(
    method.rules.some((r) => r.rule === "RPC_SAME_SERVER_STREAMING"),
    JSON.stringify(method.rules),
  );
  const value = report.differences.find((d) => d.element === "value");
  assert.ok(value);
  assert.equal(value.name, "shop.v1.Status.STATUS_CLOSED");
  assert.deepEqual(value.properties, [{ property: "number", input: "3", against: "2" }]);
  assert.equal(value.breaking, true);
  assert.match(
    formatDriftText(report, work),
    /enum value shop\.v1\.Status\.STATUS_CLOSED: number 3 in .*, 2 in /,
  );
});

test("a message, a nested message and a service only on one side are each one difference", async () => {
  const report = await drift(
    `${BASE}\nmessage Extra {\n  string a = 1;\n}\nservice AdminService {\n  rpc Ping(GetOrderRequest) returns (GetOrderRequest);\n}\n`,
    BASE.replace("  message Line {\n    string sku = 1;\n  }\n  repeated Line lines = 6;\n", ""),
  );
  const names = report.differences.map((d) => `${d.change} ${d.element} ${d.name} ${d.breaking}`).sort();
  assert.deepEqual(names, [
    "added field shop.v1.Order.lines false",
    "added message shop.v1.Extra false",
    "added message shop.v1.Order.Line false",
    "added service shop.v1.AdminService false",
  ]);
  assert.equal(report.verdict, "compatible");
  assert.equal(driftExitCode(report), 2);
  // The other way round these are deletions, which buf finds breaking.
  const back = await drift(
    BASE.replace("  message Line {\n    string sku = 1;\n  }\n  repeated Line lines = 6;\n", ""),
    `${BASE}\nmessage Extra {\n  string a = 1;\n}\nservice AdminService {\n  rpc Ping(GetOrderRequest) returns (GetOrderRequest);\n}\n`,
  );
  for (const d of back.differences) {
    assert.equal(d.change, "missing");
    assert.equal(d.breaking, true, `${d.name}: ${JSON.stringify(back.differences)}`);
  }
  const service = back.differences.find((d) => d.element === "service");
  assert.deepEqual(
    service?.rules.map((r) => r.rule),
    ["SERVICE_NO_DELETE"],
  );
});

test("a buf finding about no compared element (a file option) is a difference of its own", async () => {
  const report = await drift(edit("example.com/shop/v1;shopv1", "example.com/other/v1;otherv1"), BASE);
  const d = only(report.differences);
  assert.equal(d.change, "rule");
  assert.equal(d.element, "file");
  assert.equal(d.name, "shop/v1/shop.proto");
  assert.deepEqual(
    d.rules.map((r) => r.rule),
    ["FILE_SAME_GO_PACKAGE"],
  );
  assert.equal(d.breaking, true);
  assert.match(
    formatDriftText(report, work),
    /shop\/v1\/shop\.proto:1: breaking: File option "go_package" changed from .* \(FILE_SAME_GO_PACKAGE\)\n/,
  );
});

test("the rule category can be chosen: WIRE does not mind a renamed field", async () => {
  const a = await openSide(
    workspace(edit("string customer_name = 3;", "string client_name = 3;")),
    options(),
  );
  const b = await openSide(workspace(BASE), options());
  const report = await compareSides(a, b, { rules: "WIRE" });
  assert.equal(report.rules, "WIRE");
  const d = only(report.differences);
  assert.equal(d.breaking, false);
  assert.equal(report.verdict, "compatible");
});

test("a buf finding placed at an element no compared property covers (oneof membership) is a difference of that element", async () => {
  const report = await drift(edit("  string id = 1;\n", "  oneof key {\n    string id = 1;\n  }\n"), BASE);
  const d = only(report.differences);
  assert.equal(d.change, "rule");
  assert.equal(d.element, "field");
  assert.equal(d.name, "shop.v1.Order.id");
  assert.equal(d.input?.line, 7);
  assert.deepEqual(d.rules.map((r) => r.rule).sort(), ["FIELD_SAME_CARDINALITY", "FIELD_SAME_ONEOF"]);
  assert.equal(d.breaking, true);
  assert.match(
    formatDriftText(report, work),
    /shop\.proto:7: breaking: .*oneof.* \(FIELD_SAME_.*, FIELD_SAME_.*\)/,
  );
});
