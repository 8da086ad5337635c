/// <reference lib="dom" />
// Editing a request in a real VS Code (code-server, driven by Chromium): completion in the body offers
// the input message's field names, hovering a JSON key of the body shows the field's comment and
// its options (from the workspace's .proto files, built with buf; completion first, as it waits for
// that build), and completion in a `# @assert` path offers the response's fields (last: its widget
// must not cover the lines the hovers need).
// Screenshots: test-results/editing/.
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { type CodeServer, copyExamplesWorkspace, repoRoot, startCodeServer } from "../support/code-server";
import { openWorkbench, type Workbench } from "../support/workbench";

const artifacts = join(repoRoot, "test-results/editing");
let server: CodeServer;
let wb: Workbench;

before(
  async () => {
    const workspace = await copyExamplesWorkspace();
    // No server answers at this address (port 1): the schema comes from the workspace
    // build, with its comments. A request for Echo, whose input has a deprecated field.
    const file = join(workspace, "requests/demo.rpc");
    let text = await readFile(file, "utf8");
    text = text.replace("@host = http://127.0.0.1:8080", "@host = http://127.0.0.1:1");
    text = text.replace(
      "### Greet someone",
      '### Echo a deprecated field\n{{host}}/demo.v1.DemoService/Echo\n\n{"legacyName": "old", "json_named": 1}\n\n### Checked greeting\n# @assert message.gr\n{{host}}/demo.v1.GreetService/Greet\n\n{"name": "x"}\n\n### Greet someone',
    );
    await writeFile(file, text);
    server = await startCodeServer({ workspace });
    wb = await openWorkbench(server.url, workspace, artifacts);
    await wb.openFile("requests/demo.rpc");
    // The language server has analysed the file once its code lenses show.
    await wb.waitForText("Copy as curl", undefined, 60_000);
  },
  { timeout: 150_000 },
);

after(async () => {
  await wb?.close();
  await server?.close();
});

test("completion in the body offers the input message's field names", { timeout: 120_000 }, async () => {
  await wb.placeCursor('{"legacyName": "old"', "{");
  const suggestions = await wb.triggerCompletion();
  await wb.screenshot("completion-fields");
  await wb.page.keyboard.press("Escape");
  const labels = suggestions.map((s) => s.label);
  for (const field of ["text", "flag", "int64Value"]) {
    assert.ok(
      labels.some((l) => l.includes(field)),
      `"${field}" in the suggestions: ${labels.join(", ")}`,
    );
  }
});

/**
 * The hover over `token` once it shows `expect`: retried while the workspace build (buf, at start-up)
 * is still running, and while the hover shows only the field's diagnostic (the documentation comes
 * from the language server after it).
 */
async function hoverWhenBuilt(lineText: string, token: string, expect: RegExp): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await wb.hover(lineText, token, expect);
    } catch (err) {
      if (attempt >= 3) throw err;
      await wb.page.keyboard.press("Escape");
    }
  }
}

test("hovering a JSON key shows the field's comment, type and options", { timeout: 150_000 }, async () => {
  const hover = await hoverWhenBuilt('{"legacyName": "old"', '"legacyName"', /Use text instead\./);
  await wb.screenshot("hover-deprecated-field");
  assert.match(hover, /Use text instead\./);
  assert.match(hover, /legacy_name/);
  assert.match(hover, /string/);
  assert.match(hover, /deprecated/);
  await wb.page.keyboard.press("Escape");
  // The first hover must be gone before the next one is read.
  await wb.page
    .locator(".monaco-hover:not(.hidden)")
    .filter({ hasText: /legacy_name/ })
    .first()
    .waitFor({ state: "hidden", timeout: 10_000 });
  const named = await hoverWhenBuilt('{"legacyName": "old"', '"json_named"', /customJsonName/);
  await wb.screenshot("hover-json-name");
  assert.match(named, /customJsonName/);
  await wb.page.keyboard.press("Escape");
});

test("completion in an @assert path offers the response message's fields", { timeout: 120_000 }, async () => {
  await wb.placeCursor("# @assert message.gr", "message.gr");
  const suggestions = await wb.triggerCompletion();
  await wb.screenshot("completion-assert-path");
  await wb.page.keyboard.press("Escape");
  await wb.page.keyboard.press("Escape");
  const labels = suggestions.map((s) => s.label);
  assert.ok(
    labels.some((l) => l.includes("greeting")),
    `"greeting" (GreetResponse) in the suggestions: ${labels.join(", ")}`,
  );
});
