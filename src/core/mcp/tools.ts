// The tools `protocall mcp` offers an AI assistant (Model Context Protocol), each a plain function over the
// engine the person's front ends use: services and methods from the workspace's schema (a buf build
// of it, as `protocall check` builds it) or a server's reflection (service-tree.ts), documentation
// with comments (the hover's renderDocs), a call through the one call pipeline (call-session.ts), a
// run of a `.rpc` file through the checked-request runner (run-requests.ts) and the editor's
// diagnostics (check-files.ts). What reaches beyond the workspace goes through WorkspaceScope
// (workspace-scope.ts); every result is redacted (redact.ts) before the assistant sees it.
import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { Readable } from "node:stream";
import type { DescEnum, DescFile, DescMessage, DescService, JsonValue } from "@bufbuild/protobuf";
import { ProtocallError } from "../errors";
import type { CallSession } from "../invoke/call-session";
import type { BearerTokens } from "../invoke/io";
import { defaultCurlOptions, type Protocol } from "../invoke/options";
import { isSecretHeader, redactHeaderValue } from "../invoke/redact";
import { filesOutside } from "../rpcfile/local-files";
import type { FileSource, NamedDesc } from "../schema/types";
import type { WorkspaceScope } from "./workspace-scope";

export interface ToolContext {
  scope: WorkspaceScope;
  /** The one call session of the server (connections and schemas stay warm). */
  session: CallSession;
  env: NodeJS.ProcessEnv;
  homedir: string;
  product: string;
  /** Where `--auth` bearer tokens come from (no sign-in prompts: standard I/O is the protocol's). */
  tokens?: BearerTokens;
}

/** A tool: its name, what it does (for the assistant), its arguments as JSON Schema, and its work. */
export interface McpTool {
  name: string;
  description: string;
  inputSchema: { type: "object"; properties: Record<string, unknown>; required?: string[] };
  run(args: Record<string, unknown>, ctx: ToolContext): Promise<JsonValue>;
}

const serverArg = {
  type: "string",
  description:
    "a server URL (http://host:port) to ask by server reflection; without it, the workspace's .proto files are built",
};

export const mcpTools: readonly McpTool[] = [
  {
    name: "list_services",
    description:
      "Lists the services of the workspace's schema (its .proto files) or of a server (by reflection), each with its methods (streaming kind, input and output types, first comment line), and the servers the workspace's request files name.",
    inputSchema: { type: "object", properties: { server: serverArg } },
    async run(args, ctx) {
      const server = optionalString(args, "server");
      return withSource(ctx, server, async (source) => {
        const { describeService } = await import("../schema/service-tree");
        const names = await source.listServices();
        const services: JsonValue[] = [];
        for (const name of names) {
          const s = await describeService(source, name);
          services.push({
            name,
            comment: s?.summary ?? "",
            methods: (s?.methods ?? []).map((m) => ({
              name: m.name,
              kind: m.kind,
              input: m.input,
              output: m.output,
              comment: m.summary,
            })),
          });
        }
        return { source: source.label, services, workspaceServers: ctx.scope.workspaceServers() };
      });
    },
  },
  {
    name: "describe",
    description:
      "Describes a service, method, message, field, enum or enum value by its fully qualified name (demo.v1.GreetService.Greet, demo.v1.GreetRequest): its declaration, comments and options, as the editor's hover shows them.",
    inputSchema: {
      type: "object",
      properties: { name: { type: "string", description: "fully qualified name" }, server: serverArg },
      required: ["name"],
    },
    async run(args, ctx) {
      const name = requiredString(args, "name").replace(/^\./, "").replace("/", ".");
      const server = optionalString(args, "server");
      return withSource(ctx, server, async (source) => {
        const desc = await findDesc(source, name);
        if (!desc) {
          throw new ProtocallError(`${name} is not in ${source.label}; list_services shows what it has`);
        }
        const [{ describe }, { renderDocs }] = await Promise.all([
          import("../schema/lookup"),
          import("../schema/docs"),
        ]);
        const docs = renderDocs(describe(desc));
        const out: { [k: string]: JsonValue } = {
          title: docs.title,
          comments: docs.comments,
          documentation: docs.markdown,
        };
        if (docs.declaration) out.declaration = docs.declaration;
        if (desc.kind === "message")
          out.fields = desc.fields.map((f) => ({ name: f.name, json: f.jsonName, number: f.number }));
        if (desc.kind === "rpc") {
          out.input = desc.input.typeName;
          out.output = desc.output.typeName;
          out.kind = desc.methodKind;
        }
        return out;
      });
    },
  },
  {
    name: "call_method",
    description:
      "Calls a method of a server with a request as JSON (an array of requests for a client or bidi stream) and returns the status, the response messages, headers, trailers, and an error's code, message and decoded details. The server must be one the workspace's request files name.",
    inputSchema: {
      type: "object",
      properties: {
        url: { type: "string", description: "http://host:port/package.Service/Method" },
        request: { description: "the request message as JSON, or an array of them for a client stream" },
        headers: { type: "array", items: { type: "string" }, description: 'request headers, "Name: value"' },
        protocol: { type: "string", enum: ["connect", "grpc", "grpcweb"], description: "default connect" },
        timeoutSeconds: { type: "number", description: "default 30" },
      },
      required: ["url"],
    },
    async run(args, ctx) {
      const url = requiredString(args, "url");
      ctx.scope.checkServer(url);
      const o = defaultCurlOptions();
      o.url = url;
      const protocol = optionalString(args, "protocol");
      if (protocol !== undefined) {
        if (!["connect", "grpc", "grpcweb"].includes(protocol)) {
          throw new ProtocallError(`protocol must be connect, grpc or grpcweb, not "${protocol}"`);
        }
        o.protocol = protocol as Protocol;
      }
      const headers = args.headers ?? [];
      if (!Array.isArray(headers) || headers.some((h) => typeof h !== "string")) {
        throw new ProtocallError('headers must be an array of "Name: value" strings');
      }
      for (const h of headers as string[]) {
        // `@file` would read a file: not through this tool.
        if (h.trimStart().startsWith("@"))
          throw new ProtocallError(`header "${h}" reads a file; write it as "Name: value"`);
      }
      o.headers = headers as string[];
      const request = args.request;
      if (request !== undefined) {
        o.data = Array.isArray(request)
          ? request.map((r) => JSON.stringify(r)).join("\n")
          : JSON.stringify(request);
      }
      const timeout = args.timeoutSeconds;
      o.timeoutMs = Math.round((typeof timeout === "number" && timeout > 0 ? timeout : 30) * 1000);
      const result = await ctx.session.call(o, {
        cwd: ctx.scope.root,
        env: ctx.env,
        homedir: ctx.homedir,
        tokens: ctx.tokens,
      });
      const out: { [k: string]: JsonValue } = {
        status: result.code ?? "failed",
        exitCode: result.exitCode,
        messages: result.messages.map(parseJson),
        headers: headerObject(result.headers),
        trailers: headerObject(result.trailers),
      };
      if (result.method) out.method = result.method;
      if (result.error) {
        out.error = {
          code: result.code ?? null,
          message: result.error.message,
          details: result.error.details.map((d) => {
            const detail: { [k: string]: JsonValue } = { type: d.type.slice(d.type.lastIndexOf("/") + 1) };
            if (d.json !== undefined) detail.value = parseJson(d.json);
            else detail.bytes = d.value;
            return detail;
          }),
        };
      }
      return hideSentSecrets(out, o.headers);
    },
  },
  {
    name: "run_file",
    description:
      "Runs the requests of a .rpc request file of the workspace (or the one named) as protocall run does: each is sent and checked against its # @assert and # @snapshot options; returns each request's verdict, status, messages and failed checks.",
    inputSchema: {
      type: "object",
      properties: {
        file: { type: "string", description: "the .rpc file, relative to the workspace" },
        name: { type: "string", description: "run only the request with this name" },
        environment: { type: "string", description: "the environment to select" },
      },
      required: ["file"],
    },
    async run(args, ctx) {
      const path = ctx.scope.checkPath(requiredString(args, "file"));
      const name = optionalString(args, "name");
      const environment = optionalString(args, "environment");
      return runFile(ctx, path, name, environment);
    },
  },
  {
    name: "check_files",
    description:
      "Checks .rpc request files against the workspace's schema without sending anything (unknown methods and fields, wrong types, bad assertions) and returns the diagnostics the editor shows. Without files, every .rpc file of the workspace.",
    inputSchema: {
      type: "object",
      properties: {
        files: { type: "array", items: { type: "string" }, description: "paths relative to the workspace" },
      },
    },
    async run(args, ctx) {
      const given = args.files;
      if (given !== undefined && (!Array.isArray(given) || given.some((f) => typeof f !== "string"))) {
        throw new ProtocallError("files must be an array of paths");
      }
      const files =
        given && given.length > 0
          ? (given as string[]).map((f) => ctx.scope.checkPath(f))
          : ctx.scope.files((n) => n.endsWith(".rpc"));
      const [{ checkFiles }, { defaultSettings }] = await Promise.all([
        import("../analysis/check-files"),
        import("../analysis/settings"),
      ]);
      const { files: results } = await checkFiles(files, {
        settings: defaultSettings(),
        folders: [ctx.scope.root],
      });
      return {
        files: results.map((r) => ({
          file: shown(ctx, r.path),
          problem: r.problem ?? null,
          diagnostics: r.diagnostics.map((d) => ({
            line: d.range.start.line + 1,
            column: d.range.start.character + 1,
            severity: d.severity === 1 ? "error" : d.severity === 2 ? "warning" : "info",
            message: d.message,
          })),
        })),
      };
    },
  },
];

function shown(ctx: ToolContext, path: string): string {
  const rel = relative(ctx.scope.root, path);
  return rel.startsWith("..") ? path : rel;
}

async function runFile(
  ctx: ToolContext,
  path: string,
  name?: string,
  environment?: string,
): Promise<JsonValue> {
  const [{ parseRpcFile }, { openRpcContext }, { checkRequests, runRequests }, { prepareSend }] =
    await Promise.all([
      import("../rpcfile/parse"),
      import("../rpcfile/context"),
      import("../assertions/run-requests"),
      import("../rpcfile/prepare-send"),
    ]);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new ProtocallError(
      `cannot read ${shown(ctx, path)}: ${(err as NodeJS.ErrnoException).code ?? err}`,
    );
  }
  const parsed = parseRpcFile(text);
  const errors = parsed.diagnostics.filter((d) => d.severity === "error");
  if (errors.length > 0) {
    return { problems: errors.map((d) => `${shown(ctx, path)}:${d.range.start.line + 1}: ${d.message}`) };
  }
  const requests = name ? parsed.requests.filter((r) => r.name?.text === name) : parsed.requests;
  if (requests.length === 0) {
    throw new ProtocallError(
      name
        ? `${shown(ctx, path)} has no request named ${JSON.stringify(name)}`
        : `${shown(ctx, path)} holds no request`,
    );
  }
  const context = openRpcContext({ filePath: path, environment, processEnv: ctx.env });
  const run = { text, parsed, filePath: path, shownFile: shown(ctx, path), requests, context };
  const problems = checkRequests(run);
  if (problems.length > 0) return { problems: problems.map((p) => p.text ?? p.message) };
  // Files a request reads or writes (includes, @data, @output) stay in the workspace, and so do servers.
  for (const r of requests) {
    const p = prepareSend({
      text,
      parsed,
      filePath: path,
      requestIndex: r.index,
      processEnv: {},
      context,
      run: { pendingCaptures: "defer" },
    });
    const outside = ctx.scope.outsideAllowed() ? [] : filesOutside(p.files, [ctx.scope.root]);
    if (outside.length > 0) {
      throw new ProtocallError(
        `"${p.label}" ${outside[0].access === "read" ? "reads" : "writes"} ${outside[0].path} (${outside[0].via}), outside the workspace; ${ctx.scope.hints.outsideFiles}`,
      );
    }
    if (p.options?.url) ctx.scope.checkServer(p.options.url);
  }
  const messages = new Map<number, JsonValue[]>();
  let current = -1;
  const outcome = await runRequests({
    ...run,
    session: ctx.session,
    io: { env: ctx.env, homedir: ctx.homedir, tokens: ctx.tokens },
    observer: {
      start: (r) => {
        current = r.index;
        messages.set(current, []);
      },
      message: (json) => messages.get(current)?.push(parseJson(json)),
    },
  });
  return {
    exitCode: outcome.exitCode,
    requests: outcome.runs.map((r) => ({
      name: r.result.name,
      line: r.result.line,
      verdict: r.result.verdict,
      status: r.result.status ?? null,
      messages: messages.get(r.request.index) ?? [],
      failures: [
        ...(r.failures ?? []).map((f) => `line ${f.range.start.line + 1}: ${f.message}`),
        ...(r.result.message && r.result.verdict !== "failed" ? [r.result.message] : []),
      ],
    })),
  };
}

/** Runs `work` with the workspace's schema or a server's reflection, closed after. */
async function withSource<T>(
  ctx: ToolContext,
  server: string | undefined,
  work: (s: FileSource) => Promise<T>,
): Promise<T> {
  let source: FileSource;
  if (server) {
    ctx.scope.checkServer(server);
    const [{ describeTarget, openReflection }] = await Promise.all([import("../invoke/target")]);
    const o = defaultCurlOptions();
    o.url = server;
    o.listServices = true;
    // Standard input carries the protocol: nothing else may read it.
    const io = {
      cwd: ctx.scope.root,
      env: ctx.env,
      homedir: ctx.homedir,
      stdin: Readable.from([]),
      stdinIsTTY: false,
      tokens: ctx.tokens,
    };
    const target = await describeTarget(o, io, ctx.product);
    if (!target.connection || !target.schema.reflection)
      throw new ProtocallError(`cannot ask ${server} by reflection`);
    source = await openReflection(target.connection, target.schema.reflection, { timeoutMs: 30_000 });
  } else {
    const { openSchema } = await import("../schema/open-schema");
    source = await openSchema(ctx.scope.root, {
      cwd: ctx.scope.root,
      stdin: Readable.from([]),
      env: ctx.env,
    });
  }
  try {
    return await work(source);
  } finally {
    await source.close();
  }
}

/** A service, method, message, field, oneof, enum or enum value of a source, from its file (with comments). */
async function findDesc(source: FileSource, name: string): Promise<NamedDesc | undefined> {
  const candidates = [name, name.slice(0, Math.max(0, name.lastIndexOf(".")))].filter((n) => n !== "");
  for (const typeName of candidates) {
    let file: DescFile | undefined;
    try {
      file = await source.findFile(typeName);
    } catch {
      file = undefined;
    }
    if (!file) continue;
    const found = inFile(file, name);
    if (found) return found;
  }
  return undefined;
}

function inFile(file: DescFile, name: string): NamedDesc | undefined {
  for (const s of file.services) {
    const hit = inService(s, name);
    if (hit) return hit;
  }
  for (const m of file.messages) {
    const hit = inMessage(m, name);
    if (hit) return hit;
  }
  for (const e of file.enums) {
    const hit = inEnum(e, name);
    if (hit) return hit;
  }
  return undefined;
}

function inService(s: DescService, name: string): NamedDesc | undefined {
  if (s.typeName === name) return s;
  return s.methods.find((m) => `${s.typeName}.${m.name}` === name);
}

function inMessage(m: DescMessage, name: string): NamedDesc | undefined {
  if (m.typeName === name) return m;
  const field = m.fields.find((f) => `${m.typeName}.${f.name}` === name);
  if (field) return field;
  const oneof = m.oneofs.find((o) => `${m.typeName}.${o.name}` === name);
  if (oneof) return oneof;
  for (const n of m.nestedMessages) {
    const hit = inMessage(n, name);
    if (hit) return hit;
  }
  for (const e of m.nestedEnums) {
    const hit = inEnum(e, name);
    if (hit) return hit;
  }
  return undefined;
}

function inEnum(e: DescEnum, name: string): NamedDesc | undefined {
  if (e.typeName === name) return e;
  return e.values.find((v) => `${e.typeName}.${v.name}` === name);
}

/**
 * The result with every credential the call sent (the value of an Authorization, cookie, token …
 * header, and its part after the scheme) replaced, wherever the server echoed it (a message, an error).
 */
function hideSentSecrets(result: JsonValue, headers: readonly string[]): JsonValue {
  const secrets = new Set<string>();
  for (const h of headers) {
    const colon = h.indexOf(":");
    if (colon < 0 || !isSecretHeader(h.slice(0, colon))) continue;
    const value = h.slice(colon + 1).trim();
    const credential = /^[A-Za-z][\w-]*\s+(\S.*)$/.exec(value)?.[1];
    for (const v of [value, credential]) if (v && v.length >= 4) secrets.add(JSON.stringify(v).slice(1, -1));
  }
  if (secrets.size === 0) return result;
  let text = JSON.stringify(result);
  // Longest first, so a whole value goes before the credential inside it.
  for (const v of [...secrets].sort((a, b) => b.length - a.length)) text = text.split(v).join("[redacted]");
  return JSON.parse(text) as JsonValue;
}

function headerObject(pairs: readonly (readonly [string, string])[]): JsonValue {
  const out: { [k: string]: string[] } = {};
  for (const [n, v] of pairs) (out[n.toLowerCase()] ??= []).push(redactHeaderValue(n, v));
  return out;
}

function parseJson(text: string): JsonValue {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return text;
  }
}

function optionalString(args: Record<string, unknown>, key: string): string | undefined {
  const v = args[key];
  if (v === undefined || v === null || v === "") return undefined;
  if (typeof v !== "string") throw new ProtocallError(`${key} must be a string`);
  return v;
}

function requiredString(args: Record<string, unknown>, key: string): string {
  const v = optionalString(args, key);
  if (v === undefined) throw new ProtocallError(`${key} is required`);
  return v;
}
