// `protocall mock [FILES|DIRS] [--schema S]...`: a local mock server of a schema's services, answering
// from `.rpc` stub files and, for methods without stubs, with messages generated from the schema.
import { resolve } from "node:path";
import { ProtocallError } from "../../core/errors";
import { callLine } from "../../core/mock/call-log";
import { loadMockSchema } from "../../core/mock/mock-schema";
import { Recorder } from "../../core/mock/record";
import { adminPrefix, startMockServer } from "../../core/mock/server";
import { StubSet } from "../../core/mock/stub-set";
import { createUpstream, type UpstreamProtocol } from "../../core/mock/upstream";
import type { SchemaSource } from "../../core/schema/types";
import { defineFlags, flagsHelp, parseArgs } from "../args";
import type { CliContext, Command } from "../context";
import { untilStopped } from "../io";
import { checkServerFlags, serverFlags, serverTls } from "./server-flags";

const { host, port, tls, cert, key } = serverFlags;

const flags = defineFlags({
  schema: {
    kind: "strings",
    value: "SCHEMA",
    help: "the schema to serve: a directory of .proto files (built with buf), a .proto file, a descriptor-set file, a registry module REMOTE/owner/module[:ref], or - for stdin (default: the current directory)",
  },
  host,
  port,
  tls,
  cert,
  key,
  "no-generate": {
    kind: "bool",
    help: "answer methods that have no stub with unimplemented instead of a generated message",
  },
  seed: {
    kind: "int",
    value: "N",
    default: 1,
    help: "the seed of generated messages (the same seed, the same messages)",
  },
  "max-message": {
    kind: "size",
    defaultText: "4MiB",
    help: "largest request message; larger ones are refused with resource_exhausted",
  },
  upstream: {
    kind: "string",
    value: "URL",
    help: "send the calls that no stub answers to this server and relay its answers (streams as they flow); without --schema, the schema is the upstream's server reflection",
  },
  "upstream-protocol": {
    kind: "string",
    value: "PROTOCOL",
    choices: ["grpc", "connect", "grpcweb"],
    default: "grpc",
    help: "the protocol spoken to --upstream",
  },
  record: {
    kind: "string",
    value: "DIR",
    help: "write every call that went to --upstream as a stub in DIR (a file per method), to serve later without the upstream",
  },
  "no-watch": { kind: "bool", help: "do not reload stub files when they change" },
  quiet: { kind: "bool", help: "do not print a line per call" },
});

const help = `Usage: protocall mock [FILES|DIRS] [--schema SCHEMA]... [flags]

Serves every service of the schema on one port, as a real server would: Connect (HTTP/1.1 and
HTTP/2), gRPC (h2c, or TLS with --tls or --cert/--key) and gRPC-Web, JSON and binary, gzip, all four
streaming shapes, CORS for pages; gRPC server reflection (v1, v1alpha) and grpc.health.v1.

Calls are answered by the .rpc stub files given (every .rpc file below a directory): the first stub of
the method whose request part matches (highest @priority first). A method without stubs answers a
message generated from the schema (deterministic for --seed), or unimplemented with --no-generate. When
a method has stubs and none matches, the call fails with not_found, naming the closest stubs and the
check each failed. With --upstream, calls that no stub answers go to that server instead, and its
answers are relayed as they come (headers, messages, trailers, errors with details); --record DIR
writes each of those calls as a stub, so that \`protocall mock DIR\` answers them the same way later.
The stub syntax is in the README ("Mock server").

Prints the base URL on the first line of stdout, then one line per call on stderr. Stub files reload
when they change; a file with an error is reported at file:line:col and its previous stubs keep
serving. Admin paths (HTTP, any protocol version):
  GET  ${adminPrefix}calls   the calls so far, as JSON
  GET  ${adminPrefix}stubs   the stubs being served
  POST ${adminPrefix}reset   forget the calls and start every stub's sequence over

Flags:
${flagsHelp(flags)}
Example:
  protocall mock examples/mocks --schema examples --port 8080
  buf curl --protocol grpc --http2-prior-knowledge -d '{"name": "world"}' http://127.0.0.1:8080/demo.v1.GreetService/Greet
`;

async function run(args: string[], ctx: CliContext): Promise<number> {
  const parsed = parseArgs(args, flags, { command: "protocall mock", positionals: Number.MAX_SAFE_INTEGER });
  if (parsed.help) {
    ctx.stdout.write(help);
    return 0;
  }
  const values = parsed.values;
  checkServerFlags({ ...values, prefix: "buf" });
  const stopped = untilStopped(ctx);
  if (values.record && !values.upstream) {
    throw new ProtocallError("--record writes the calls that go to --upstream: give --upstream URL too");
  }
  const upstream = values.upstream
    ? createUpstream(values.upstream, values["upstream-protocol"] as UpstreamProtocol)
    : undefined;
  const specs = values.schema.length > 0 ? values.schema : upstream ? [] : ["."];
  const { openSchema } = await import("../../core/schema/open-schema");
  const sources: SchemaSource[] = [];
  try {
    for (const spec of specs) {
      sources.push(await openSchema(spec, { cwd: ctx.cwd, stdin: ctx.stdin, env: ctx.env }));
    }
    if (upstream && specs.length === 0) {
      const { createReflectionSource } = await import("../../core/schema/reflection-client");
      const { createGrpcTransport } = await import("@connectrpc/connect-node");
      sources.push(
        createReflectionSource({
          transport: createGrpcTransport({ baseUrl: upstream.url }),
          label: `reflection at ${upstream.url}`,
          timeoutMs: 10_000,
        }),
      );
    }
    const schema = await loadMockSchema(sources);
    const log = (line: string) => ctx.stderr.write(`${line}\n`);
    const stubs = new StubSet({ paths: parsed.positionals, cwd: ctx.cwd, schema, env: ctx.env, log });
    const errors = await stubs.load();
    if (errors > 0) {
      throw new ProtocallError(
        `the stub files have ${errors} error${errors === 1 ? "" : "s"} (above); fix them and start again`,
      );
    }
    const tlsFiles = await serverTls({ ...values, prefix: "buf" }, ctx, "mock");
    const server = await startMockServer({
      schema,
      stubs,
      generate: !values["no-generate"],
      seed: values.seed,
      host: values.host,
      port: values.port,
      tls: tlsFiles,
      maxMessageBytes: values["max-message"],
      upstream,
      recorder: values.record ? new Recorder(resolve(ctx.cwd, values.record), schema, log) : undefined,
      env: ctx.env,
      onCall: values.quiet ? undefined : (call) => log(callLine(call)),
    });
    if (!values["no-watch"]) stubs.watch();
    ctx.stdout.write(`${server.url}\n`);
    const n = stubs.all().length;
    log(
      `serving ${schema.serviceNames.length} service${schema.serviceNames.length === 1 ? "" : "s"} with ${n} stub${n === 1 ? "" : "s"}${values["no-generate"] ? "" : "; methods without stubs answer generated messages"}`,
    );
    await stopped;
    stubs.close();
    await server.close();
    return 0;
  } finally {
    for (const s of sources) await s.close();
  }
}

export const command: Command = { run };
