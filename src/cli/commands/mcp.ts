// `protocall mcp [--workspace DIR] [--allow-server URL] [--allow-any-server] [--allow-outside-files]`:
// a Model Context Protocol server on standard input and output, for AI coding assistants. The tools and
// their limits are core/mcp/ (tools.ts, workspace-scope.ts); this file parses the flags and connects
// the server to stdio until the client closes it (or Ctrl-C). Nothing but the protocol may be written
// to stdout, so diagnostics go to stderr.

import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { bearerTokens } from "../../core/auth/bearer-tokens";
import { ProtocallError } from "../../core/errors";
import { defineFlags, flagsHelp, parseArgs } from "../args";
import type { CliContext, Command } from "../context";
import { homeDirectory } from "../io";
import { version } from "../version";

const flags = defineFlags({
  workspace: { kind: "string", value: "DIR", help: "the workspace folder (default: the current directory)" },
  "allow-server": {
    kind: "strings",
    value: "URL",
    help: "also allow calls to this server (besides those the workspace's request and environment files name); repeatable",
  },
  "allow-any-server": { kind: "bool", help: "allow calls to any server" },
  "allow-outside-files": {
    kind: "bool",
    help: "allow files outside the workspace (request files, includes, @data, @output)",
  },
});

const help = `Serve a workspace to AI coding assistants over the Model Context Protocol (stdio).

Usage:
  protocall mcp [flags]

Tools: list_services (the workspace's .proto services, or a server's by reflection), describe (a
service, method, message, field or enum, with its comments), call_method (request JSON in, status,
messages, headers, trailers and decoded error details out), run_file (a .rpc file, or one request of
it, with its assertions and snapshots), check_files (the editor's diagnostics for .rpc files).

Calls go only to servers that the workspace's .rpc files and protocall.env*.json files name, and
files are read only inside the workspace, unless the flags below allow more. Secrets (Authorization
and other credential headers, passwords in URLs) are redacted from every result.

An MCP client starts it as a command, for example:
  {"command": "protocall", "args": ["mcp", "--workspace", "/path/to/project"]}

Flags:
${flagsHelp(flags)}`;

export const command: Command = {
  async run(args: string[], ctx: CliContext): Promise<number> {
    const { values, positionals, help: wantsHelp } = parseArgs(args, flags, { command: "protocall mcp" });
    if (wantsHelp) {
      ctx.stdout.write(help);
      return 0;
    }
    if (positionals.length > 0) {
      throw new ProtocallError(
        `protocall mcp takes no arguments, got ${positionals.map((p) => JSON.stringify(p)).join(", ")}`,
      );
    }
    const root = resolve(ctx.cwd, values.workspace ?? ".");
    if (!existsSync(root) || !statSync(root).isDirectory()) {
      throw new ProtocallError(`--workspace ${values.workspace}: no such directory`);
    }
    for (const url of values["allow-server"]) {
      if (!/^https?:\/\//.test(url)) {
        throw new ProtocallError(`--allow-server ${url}: expected an http:// or https:// URL`);
      }
    }
    const [{ createMcpServer }, { WorkspaceScope }, { createCallSession }, { StdioServerTransport }] =
      await Promise.all([
        import("../../core/mcp/server"),
        import("../../core/mcp/workspace-scope"),
        import("../../core/invoke/call-session"),
        import("@modelcontextprotocol/sdk/server/stdio.js"),
      ]);
    const scope = new WorkspaceScope({
      root,
      allowServers: values["allow-server"],
      anyServer: values["allow-any-server"],
      outsideFiles: values["allow-outside-files"],
    });
    const product = `protocall/${version}`;
    const session = createCallSession({ product });
    const server = createMcpServer(
      // Tokens without sign-in prompts: standard I/O carries the protocol.
      { scope, session, env: ctx.env, homedir: homeDirectory(ctx), product, tokens: bearerTokens() },
      version,
    );
    const transport = new StdioServerTransport(ctx.stdin, ctx.stdout);
    const closed = new Promise<void>((done) => {
      server.onclose = () => done();
      ctx.stdin.once("end", () => done());
      ctx.interrupted({ terminate: true }).addEventListener("abort", () => done(), { once: true });
    });
    await server.connect(transport);
    await closed;
    await server.close().catch(() => {});
    await session.close();
    return 0;
  },
};
