// Appending a new request to .rpc text: separation, the @host variable, the cursor in the body; the
// result always parses without diagnostics.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { appendRequest } from "../../../src/core/rpcfile/append-request";
import { parseRpcFile } from "../../../src/core/rpcfile/parse";

const request = '### Greet\n# Greets.\n{{host}}/demo.v1.GreetService/Greet\n\n{\n  "name": ""\n}\n';
const host = { name: "host", value: "http://127.0.0.1:8080" };

function apply(text: string, r: ReturnType<typeof appendRequest>): string {
  let out = text;
  for (const i of [...r.inserts].sort((a, b) => b.offset - a.offset)) {
    out = out.slice(0, i.offset) + i.text + out.slice(i.offset);
  }
  return out;
}

describe("appendRequest", () => {
  it("writes a new file: the variable, an empty line, the request; the cursor inside the first value", () => {
    const r = appendRequest("", request, { variable: host });
    const out = apply("", r);
    assert.equal(out, `@host = http://127.0.0.1:8080\n\n${request}`);
    assert.equal(out.slice(r.cursor - 11, r.cursor + 1), '  "name": ""');
    assert.deepEqual(parseRpcFile(out).diagnostics, []);
  });

  it("appends after the last request with one empty line, leaving a defined variable alone", () => {
    const existing = "@host = http://x:1\n\n### A\n{{host}}/a.v1.S/M\n\n{}";
    const r = appendRequest(existing, request, { variable: host });
    const out = apply(existing, r);
    assert.equal(out, `${existing}\n\n${request}`);
    const parsed = parseRpcFile(out);
    assert.deepEqual(parsed.diagnostics, []);
    assert.equal(parsed.requests.length, 2);
    assert.equal(out.slice(r.cursor - 1, r.cursor + 1), '""');

    const ending = `${existing}\n`;
    assert.equal(apply(ending, appendRequest(ending, request, { variable: host })), `${ending}\n${request}`);
    const blank = `${existing}\n\n`;
    assert.equal(apply(blank, appendRequest(blank, request, { variable: host })), `${blank}${request}`);
  });

  it("defines the variable at the top when neither the file nor the environment does", () => {
    const existing = "### A\nhttp://x:1/a.v1.S/M\n\n{}\n";
    const r = appendRequest(existing, request, { variable: host });
    const out = apply(existing, r);
    assert.equal(out, `@host = http://127.0.0.1:8080\n\n${existing}\n${request}`);
    assert.equal(out.slice(r.cursor - 1, r.cursor + 1), '""');
    const withEnv = appendRequest(existing, request, { variable: host, defined: ["host"] });
    assert.equal(apply(existing, withEnv), `${existing}\n${request}`);
  });

  it("puts the cursor after { for an empty message and at the body for a request without a body", () => {
    const empty = "### E\n{{host}}/a.v1.S/E\n\n{}\n";
    const r = appendRequest("", empty);
    assert.equal(empty.slice(0, r.cursor), "### E\n{{host}}/a.v1.S/E\n\n{");
    const numeric = '### N\n{{host}}/a.v1.S/N\n\n{\n  "count": 0\n}\n';
    const n = appendRequest("", numeric);
    assert.equal(numeric.slice(n.cursor, n.cursor + 1), "0");
  });
});
