// `protocall drift`: is this server running the schema I think it is? Compares a server's reflection,
// a registry module, a workspace or a descriptor set with another of these (core/drift), prints the
// differences for people or as JSON, and exits with a code CI can act on.

import type { DriftOptions, DriftReport } from "../../core/drift/drift";
import { errorMessage, ProtocallError } from "../../core/errors";
import { defaultCurlOptions, type Protocol } from "../../core/invoke/options";
import { defineFlags, flagsHelp, parseArgs } from "../args";
import type { CliContext, Command } from "../context";
import { reportError } from "../report-error";

const flags = defineFlags({
  against: {
    kind: "string",
    value: "SOURCE",
    help: "what to compare with: a directory or .proto file (built with buf), a descriptor set or image, a registry module (REMOTE/owner/module[:ref]), or a server URL; default for a server: the current directory's schemas",
  },
  format: { kind: "string", choices: ["text", "json"], default: "text", help: "output format" },
  rules: {
    kind: "string",
    choices: ["FILE", "PACKAGE", "WIRE_JSON", "WIRE"],
    defaultText: "FILE, or PACKAGE when a server names its files otherwise than its source",
    help: "the category of buf's breaking rules that decides what breaks clients",
  },
  protocol: {
    kind: "string",
    choices: ["grpc", "connect", "grpcweb"],
    default: "grpc",
    help: "the protocol of server reflection",
  },
  "reflect-header": {
    kind: "strings",
    short: "H",
    value: "HEADER",
    help: "a header sent with reflection requests, name: value (repeatable)",
  },
  insecure: { kind: "bool", short: "k", help: "do not verify a server's TLS certificate" },
  cacert: {
    kind: "string",
    value: "FILE",
    help: "PEM file of the authorities that sign a server's or registry's certificate",
  },
  cert: { kind: "string", short: "E", value: "FILE", help: "PEM client certificate for a server" },
  key: { kind: "string", value: "FILE", help: "PEM private key of --cert" },
  timeout: {
    kind: "duration",
    default: 30_000,
    min: 1,
    help: "longest wait for a server to connect and answer each reflection request",
  },
});

const help = `Compare the schema a server runs with its source (or any two schemas), classified by buf's breaking rules.

Usage: protocall drift <URL | REMOTE/owner/module[:ref] | dir | set> --against <dir | set | REMOTE/owner/module[:ref] | URL>
       protocall drift <URL>

Without --against, a server is compared with the current directory's workspace: the first of its
schemas (each build root, then each *.binpb file, in the order the editor reads them) that declares
a service the server serves, as the editor's Services view does.

Each side is a running server (its gRPC reflection: the services it lists and the files they need),
a registry module, a workspace directory or .proto file (built with the bundled buf), or a
descriptor set or buf image. Printed, one per line, with its place in the source (file:line where
the source has source info): services, methods, messages, fields, enums and enum values on one side
only, and changes of a field's number, type, label, name or JSON name, of a method's types or
streaming, and of an enum value's number or name.

Each difference is classified as the bundled \`buf breaking <first> --against <--against>\`
classifies it, with buf's default rules (FILE; see --rules): "breaking" means a client built from
the --against side may fail against the first (a server that lacks a method or a field the source
has, a field renumbered); "compatible" means buf finds nothing (a method or field the server has
beyond its source). A finding of buf about nothing compared above (a file option, a oneof, a file
deleted) is a difference of its own. A server that names its files otherwise than its source
(grpc-js names them after their package) is judged by buf's PACKAGE rules, which compare by
package: by FILE rules every file would count as deleted. With a server on either side, a schema is
compared only through its files that declare services and what they import, and the server's
reflection services are left out; services that the server's files declare but it does not serve
are noted, not counted.

Exit codes: 0 no differences; 1 a difference breaks clients; 2 differences, all compatible;
3 no comparison was made (bad flags, a server that cannot be reached or has no reflection, a
schema that does not build, buf failing).

Flags:
${flagsHelp(flags)}
Examples:
  protocall drift http://localhost:8080 --against proto
  protocall drift https://api.example.com --against buf.example.com/acme/weather:main --format json
  protocall drift api.binpb --against proto
`;

export const command: Command = {
  async run(args: string[], ctx: CliContext): Promise<number> {
    try {
      return await drift(args, ctx);
    } catch (err) {
      reportError(err instanceof ProtocallError ? err : new ProtocallError(describe(err)), ctx);
      return (await import("../../core/drift/report-text")).DRIFT_ERROR_EXIT;
    }
  },
};

/** One line for a failure that is not already worded for the user (a reflection error). */
function describe(err: unknown): string {
  const e = err as { name?: string; rawMessage?: string };
  return e?.name === "ConnectError" && e.rawMessage ? e.rawMessage : errorMessage(err);
}

async function drift(args: string[], ctx: CliContext): Promise<number> {
  const {
    values,
    positionals,
    help: helpWanted,
  } = parseArgs(args, flags, {
    command: "protocall drift",
    positionals: Number.POSITIVE_INFINITY,
  });
  if (helpWanted) {
    ctx.stdout.write(help);
    return 0;
  }
  if (positionals.length !== 1) {
    throw new ProtocallError(
      `drift takes one server URL or schema to check, got ${positionals.length}${positionals.length ? `: ${positionals.join(" ")}` : ""}; run \`protocall drift --help\` for usage`,
    );
  }
  const { isServerUrl } = await import("../../core/drift/open-side");
  if (!values.against && !isServerUrl(positionals[0])) {
    throw new ProtocallError(
      "drift needs --against: the source to compare with (a directory, a descriptor set, a registry module or a server URL); only a server URL may leave it out, to be compared with the current directory's schemas",
    );
  }
  const { runDrift } = await import("../../core/drift/drift");
  const { driftExitCode, formatDriftText } = await import("../../core/drift/report-text");
  const signal = ctx.interrupted();
  const options = {
    cwd: ctx.cwd,
    stdin: ctx.stdin,
    env: ctx.env,
    signal,
    cacert: values.cacert,
    rules: values.rules,
    timeoutMs: values.timeout,
    connection: {
      ...defaultCurlOptions(),
      protocol: values.protocol as Protocol,
      reflectHeaders: values["reflect-header"],
      insecure: values.insecure || undefined,
      cacert: values.cacert,
      cert: values.cert,
      key: values.key,
    },
  };
  const report = values.against
    ? await runDrift(positionals[0], values.against, options)
    : await againstWorkspace(positionals[0], options, ctx.cwd);
  ctx.stdout.write(
    values.format === "json" ? `${JSON.stringify(report, null, 2)}\n` : formatDriftText(report, ctx.cwd),
  );
  return driftExitCode(report);
}

/** A server against the first schema of the current directory's workspace that declares a service it serves. */
async function againstWorkspace(url: string, options: DriftOptions, cwd: string): Promise<DriftReport> {
  const { serverDrift, workspaceCandidates } = await import("../../core/drift/server-drift");
  const { candidates, problems } = await workspaceCandidates(cwd, { env: options.env });
  const found = await serverDrift(url, candidates, options);
  if (!found) {
    const tried =
      candidates.length > 0 ? `the schemas there (${candidates.join(", ")})` : "there are no schemas there";
    const failed = problems.length > 0 ? `; these could not be read: ${problems.join("; ")}` : "";
    throw new ProtocallError(
      `no schema of the workspace at ${cwd} declares a service that ${url} serves: ${tried}${failed}; give the source with --against`,
    );
  }
  return found.report;
}
