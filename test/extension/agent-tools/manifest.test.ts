// The editor's language-model tools (package.json contributes.languageModelTools) against the tools of
// `protocall mcp` (core/mcp/tools.ts): the same tools, each under its editor name, with the same
// description for the model and the same argument schema, and each offered only in a trusted workspace.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { mcpTools } from "../../../src/core/mcp/tools";
import { editorToolName } from "../../../src/extension/agent-tools/tool-names";
import { repoRoot } from "../../support/cli";

interface ManifestTool {
  name: string;
  displayName: string;
  modelDescription: string;
  inputSchema: unknown;
  when?: string;
}

const manifest = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as {
  contributes: { languageModelTools: ManifestTool[] };
};
const declared = manifest.contributes.languageModelTools;

test("the manifest declares exactly the MCP tools, under their editor names", () => {
  assert.deepEqual(
    declared.map((t) => t.name),
    mcpTools.map((t) => editorToolName(t.name)),
  );
});

test("each declared tool has the MCP tool's description and argument schema", () => {
  for (const tool of mcpTools) {
    const d = declared.find((t) => t.name === editorToolName(tool.name));
    assert.ok(d, tool.name);
    assert.equal(d.modelDescription, tool.description, `${tool.name}: modelDescription`);
    assert.deepEqual(d.inputSchema, tool.inputSchema, `${tool.name}: inputSchema`);
    assert.ok(d.displayName.length > 0, `${tool.name}: displayName`);
  }
});

test("every tool is offered only in a trusted workspace", () => {
  for (const d of declared) assert.equal(d.when, "isWorkspaceTrusted", d.name);
});
