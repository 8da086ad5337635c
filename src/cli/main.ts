// The `protocall` command line. Each command lives in ./commands and is loaded only when used,
// so a call pays only for the code it runs. `curl` also has a bundle of its own (curl-main.ts),
// which bin/protocall.js runs for `protocall curl`; this table serves every command.
import { closest } from "../core/closest";
import { provideRegistryModules } from "../core/registry/provide";
import type { CliContext, Command } from "./context";
import { exitWith, processContext } from "./process-context";
import { reportError } from "./report-error";
import { version } from "./version";

export { reportError };

// `--schema REMOTE/owner/module` (curl, run, check, convert) opens modules through the registry client.
provideRegistryModules();

const commands: Record<string, { summary: string; load: () => Promise<Command> }> = {
  build: {
    summary: "Build a directory of .proto files to a binary descriptor set",
    load: async () => (await import("./commands/build")).command,
  },
  curl: {
    summary: "Call an RPC over Connect, gRPC or gRPC-Web (a drop-in for `buf curl`)",
    load: async () => (await import("./commands/curl")).command,
  },
  run: {
    summary: "Run the requests of a .rpc request file (with environments and variables)",
    load: async () => (await import("./commands/run")).command,
  },
  load: {
    summary: "Load-test a request: a rate or concurrency, latency percentiles, thresholds for CI",
    load: async () => (await import("./commands/load")).command,
  },
  check: {
    summary: "Check .rpc request files against their schema, as the editor does (for pre-commit hooks)",
    load: async () => (await import("./commands/check")).command,
  },
  webhook: {
    summary: "Create, list and delete registry webhooks; send a test push event",
    load: async () => (await import("./commands/webhook")).command,
  },
  listen: {
    summary: "Run a local webhook listener that stores, prints, forwards and replays push events",
    load: async () => (await import("./commands/listen")).command,
  },
  registry: {
    summary: "Run a registry emulator (the module API buf pushes to, webhooks, deliveries) for local testing",
    load: async () => (await import("./commands/registry")).command,
  },
  drift: {
    summary:
      "Compare a server's schema (reflection) with its source or registry module, classified by buf breaking",
    load: async () => (await import("./commands/drift")).command,
  },
  mock: {
    summary: "Run a mock server of a schema's services, answering from .rpc stub files or generated messages",
    load: async () => (await import("./commands/mock")).command,
  },
  proxy: {
    summary: "Pass Connect, gRPC and gRPC-Web calls through to a server, decoded, recorded and exportable",
    load: async () => (await import("./commands/proxy")).command,
  },
  convert: {
    summary: "Convert a message between JSON and binary (EventRequest built in)",
    load: async () => (await import("./commands/convert")).command,
  },
  mcp: {
    summary:
      "Serve the workspace's services, schema and request files to AI coding assistants (Model Context Protocol, stdio)",
    load: async () => (await import("./commands/mcp")).command,
  },
  beta: {
    summary: "`beta registry webhook create|list|delete`, as the registry CLI spells it",
    load: async () => (await import("./commands/beta")).command,
  },
};

function usage(): string {
  const width = Math.max(...Object.keys(commands).map((n) => n.length));
  const lines = Object.entries(commands).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`);
  return [
    "Protocall: call Protobuf APIs over Connect, gRPC and gRPC-Web, and manage registry webhooks.",
    "",
    "Usage: protocall <command> [flags]",
    "",
    "Commands:",
    ...lines,
    "",
    "Run `protocall <command> --help` for the flags of a command.",
    "",
  ].join("\n");
}

export async function main(argv: string[], ctx: CliContext): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "-h" || name === "--help" || name === "help") {
    ctx.stdout.write(usage());
    return name === undefined ? 1 : 0;
  }
  if (name === "--version" || name === "version") {
    ctx.stdout.write(`${version}\n`);
    return 0;
  }
  const entry = Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (!entry) {
    const [hint] = closest(name, Object.keys(commands));
    ctx.stderr.write(
      `protocall: unknown command "${name}"${hint ? ` (did you mean ${hint}?)` : ""}; run \`protocall --help\` for the list of commands\n`,
    );
    return 1;
  }
  try {
    const command = await entry.load();
    return await command.run(rest, ctx);
  } catch (err) {
    return reportError(err, ctx);
  }
}

// A worker thread of `protocall load --workers N` runs this bundle with its share of the run
// (load-workers.ts starts it with this argument; node:worker_threads is loaded only then).
const loadWorker = (() => {
  if (process.argv[2] !== "--protocall-load-worker") return undefined;
  const threads = require("node:worker_threads") as typeof import("node:worker_threads");
  return threads.isMainThread
    ? undefined
    : threads.workerData?.protocallLoadWorker
      ? threads.workerData
      : undefined;
})();
if (loadWorker) {
  void import("./commands/load-worker").then((m) => m.runLoadWorker(loadWorker));
} else if (require.main === module) {
  const ctx = processContext();
  exitWith(main(process.argv.slice(2), ctx), ctx);
}
