// The Model Context Protocol server of `protocall mcp`, on the official SDK's low-level Server (the
// tools' argument schemas are plain JSON Schema in tools.ts, so no schema library is needed): lists
// the tools and runs them. A tool that fails returns its error as a result with isError (what, and
// how to allow or fix it), never a protocol error, so the assistant reads why; every result is redacted.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { errorMessage } from "../errors";
import { redactSecrets } from "../invoke/redact";
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
    const tool = mcpTools.find((t) => t.name === request.params.name);
    if (!tool) {
      return {
        isError: true,
        content: [
          {
            type: "text" as const,
            text: `unknown tool ${request.params.name}; the tools are ${mcpTools.map((t) => t.name).join(", ")}`,
          },
        ],
      };
    }
    try {
      const result = await tool.run(request.params.arguments ?? {}, ctx);
      return { content: [{ type: "text" as const, text: redactSecrets(JSON.stringify(result, null, 2)) }] };
    } catch (err) {
      return { isError: true, content: [{ type: "text" as const, text: redactSecrets(errorMessage(err)) }] };
    }
  });
  return server;
}
