// Running one tool by name, as every front end that offers the tools does (`protocall mcp` over the
// Model Context Protocol, the editor as VS Code language-model tools): the arguments checked by the
// tool, its result as indented JSON, an error as its message, both redacted. One function, so an
// assistant reads the same answer (and the same refusal) whichever front end it talks to.
import { errorMessage } from "../errors";
import { redactSecrets } from "../invoke/redact";
import { mcpTools, type ToolContext } from "./tools";

/** What a tool answered: the text the assistant reads, and whether it is an error (a refusal, a bad argument). */
export interface ToolOutcome {
  text: string;
  isError: boolean;
}

export async function runTool(name: string, args: unknown, ctx: ToolContext): Promise<ToolOutcome> {
  const tool = mcpTools.find((t) => t.name === name);
  if (!tool) {
    return {
      isError: true,
      text: `unknown tool ${name}; the tools are ${mcpTools.map((t) => t.name).join(", ")}`,
    };
  }
  if (args !== undefined && args !== null && (typeof args !== "object" || Array.isArray(args))) {
    return { isError: true, text: `the arguments of ${name} must be a JSON object` };
  }
  try {
    const result = await tool.run((args ?? {}) as Record<string, unknown>, ctx);
    return { isError: false, text: redactSecrets(JSON.stringify(result, null, 2)) };
  } catch (err) {
    return { isError: true, text: redactSecrets(errorMessage(err)) };
  }
}
