// The Model Context Protocol server of `protocall mcp`, on the official SDK's low-level Server (the
// tools' argument schemas are plain JSON Schema in tools.ts, so no schema library is needed): lists
// the tools and runs them. A tool that fails returns its error as a result with isError (what, and
// how to allow or fix it), never a protocol error, so the assistant reads why; run-tool.ts runs
// each tool (and redacts), as it does for the editor's language-model tools.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { runTool } from "./run-tool";
import { mcpTools, type ToolContext } from "./tools";

/** A server offering the tools over whatever transport it is connected to. */
export function createMcpServer(ctx: ToolContext, version: string): Server {
  const server = new Server(
    { name: "protocall", version },
    {
      capabilities: { tools: {} },
      instructions:
        "Protocall: list, describe and call the gRPC / Connect services of this workspace, and run or check its .rpc request files.",
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: mcpTools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const { text, isError } = await runTool(request.params.name, request.params.arguments, ctx);
    return { ...(isError ? { isError } : {}), content: [{ type: "text" as const, text }] };
  });
  return server;
}
