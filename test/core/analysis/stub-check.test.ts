// The one schema check of stub documents: the mock's load errors (stub-load.ts) and the editor's
// diagnostics (checkStubDocuments, which the language server runs) are the same problems at the
// same places, with the quick fix's replacement.
import assert from "node:assert/strict";
import { test } from "node:test";
import { checkStubDocuments } from "../../../src/core/analysis/stub-check";
import { formatDiagnostic, loadStubText } from "../../../src/core/mock/stub-load";
import { parseStubFile } from "../../../src/core/rpcfile/stub-syntax";
import { demoSchema } from "../mock/support";

const text = `### greet
/demo.v1.GreetService/Greet

{"nme": "world"}

>>> not_found "no {{request.name}}"
# @detail google.rpc.ErrorInfo {"reasn": "r"}

### streamed
/demo.v1.DemoService/Chat

>>> ok

{
  "txt": "{{request.text}}"
}
`;

test("request parts, answers and details are checked as their own types, at the key, with the field meant", () => {
  const parsed = parseStubFile(text);
  assert.deepEqual(parsed.diagnostics, []);
  const found = parsed.stubs.flatMap((s) => {
    const method = demoSchema.methods.get(s.method);
    assert.ok(method, s.method);
    return checkStubDocuments(s, method, (name) => demoSchema.message(name));
  });
  assert.deepEqual(
    found.map((d) => [d.range.start.line, d.range.start.character, d.message.split(";")[0], d.replacement]),
    [
      [3, 1, 'unknown field "nme" in message demo.v1.GreetRequest (did you mean "name"?)', '"name"'],
      [6, 32, 'unknown field "reasn" in message google.rpc.ErrorInfo (did you mean "reason"?)', '"reason"'],
      [14, 2, 'unknown field "txt" in message demo.v1.ChatResponse (did you mean "text"?)', '"text"'],
    ],
  );
  // The mock says exactly the same, as file:line:col.
  const loaded = loadStubText(text, "s.rpc", demoSchema);
  assert.deepEqual(
    loaded.problems,
    found.map((d) => formatDiagnostic("s.rpc", d)),
  );
  assert.equal(loaded.stubs.length, 0);
});
