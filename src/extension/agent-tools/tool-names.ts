// The editor's name of each `protocall mcp` tool (VS Code wants language-model tool names unique across
// extensions, hence the prefix); kept apart from the feature so the manifest test can read it without `vscode`.

export function editorToolName(tool: string): string {
  return `protocall_${tool}`;
}
