// `protocall check [FILES|DIRS] [--schema S]`: the language server's diagnostics of .rpc files
// (src/core/analysis/check-files.ts: the same analysis the editor runs), printed as
// `file:line:col: severity: message`, exit 1 when any is an error. Meant for pre-commit hooks and
// CI: nothing is sent, server reflection is off unless --reflect, and every file is checked against
// one opened schema.
import { existsSync, readdirSync, statSync } from "node:fs";
import { relative, resolve } from "node:path";
import { ProtocallError } from "../../core/errors";
import { defineFlags, flagsHelp, parseArgs } from "../args";
import type { CliContext, Command } from "../context";

const flags = defineFlags({
  schema: {
    kind: "strings",
    value: "PATH",
    help: "a schema for every file: a directory of .proto files, a .proto file or a descriptor-set file (binary or JSON, buf image); repeatable",
  },
  env: {
    kind: "string",
    value: "ENV",
    help: "environment to select from the environment file (for {{variables}})",
  },
  "env-file": {
    kind: "string",
    value: "FILE",
    help: "environment file (default: protocall.env.json at the workspace root)",
  },
  "no-build": {
    kind: "bool",
    help: "do not build the workspace's .proto files (use --schema and # @schema)",
  },
  reflect: { kind: "bool", help: "also ask the servers of the requests' URLs (server reflection)" },
  "allow-no-schema": {
    kind: "bool",
    help: "do not fail when no schema is found for a request (it is then checked for syntax, options and variables only)",
  },
  verbose: { kind: "bool", short: "v", help: "print what is built and opened on stderr" },
});

const help = `Check .rpc request files against their schema, as the editor does, without sending anything.

Usage:
  protocall check [FILES|DIRS] [flags]

Prints the diagnostics the editor shows for each file (syntax, unknown request options and
variables, unknown services and methods with the closest names, request bodies against the input
message, # @assert and # @capture paths against the output message) as

  FILE:LINE:COL: SEVERITY: MESSAGE          (SEVERITY: error, warning, info or hint)

and exits 1 when any is an error, 0 otherwise. Directories are searched for *.rpc files (not in
node_modules or directories starting with a dot); without arguments, the current directory.

A request for which no schema is found (no --schema, no .proto files to build, no descriptor set,
no # @schema, reflection off) could not be checked against one: it is an error, with what was
tried, unless --allow-no-schema is given (then only its syntax, options and variables are checked).

The schema: the .proto files of the nearest directory above each file with a buf.yaml or
buf.work.yaml (else its workspace root: protocall.env.json or .git), built with buf; descriptor-set
files (*.binpb) there; --schema values; and a request's own # @schema options. Server reflection of
the requests' URLs is off (a check should not depend on a running server): --reflect turns it on.

Examples:
  protocall check requests/
  protocall check api.rpc --schema api.binpb
  protocall check --env staging
  protocall check requests/ --allow-no-schema

Flags:
${flagsHelp(flags)}`;

interface CheckArgs {
  paths: string[];
  schemas: string[];
  env?: string;
  envFile?: string;
  build: boolean;
  reflect: boolean;
  allowNoSchema: boolean;
  verbose: boolean;
  help: boolean;
}

function parseCheckArgs(args: string[]): CheckArgs {
  const { values, positionals, help } = parseArgs(args, flags, {
    command: "protocall check",
    positionals: Number.POSITIVE_INFINITY,
  });
  return {
    paths: positionals,
    schemas: values.schema,
    env: values.env,
    envFile: values["env-file"],
    build: !values["no-build"],
    reflect: values.reflect,
    allowNoSchema: values["allow-no-schema"],
    verbose: values.verbose,
    help,
  };
}

/** What `check` tried for the schema, in words: each source opened, and each kind that found none. */
function triedText(a: CheckArgs, tried: readonly string[], folders: readonly string[]): string {
  const parts = [...tried];
  const where = folders.join(", ");
  if (a.schemas.length === 0) parts.push("--schema (none given)");
  if (!a.build) parts.push("workspace builds (off: --no-build)");
  else if (!tried.some((t) => t.startsWith("build of "))) {
    parts.push(`workspace builds (no buf.yaml, buf.work.yaml or .proto files in ${where})`);
  }
  if (!tried.some((t) => t.startsWith("descriptor set ")))
    parts.push(`descriptor sets (no *.binpb in ${where})`);
  parts.push("the requests' # @schema options (none that opened)");
  parts.push(a.reflect ? "server reflection (on)" : "server reflection (off: --reflect turns it on)");
  return parts.join("; ");
}

const severityNames: Record<number, string> = { 1: "error", 2: "warning", 3: "info", 4: "hint" };

/** The .rpc files named: files as given, directories searched. */
function collectFiles(cwd: string, paths: readonly string[]): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    const entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const e of entries) {
      if (e.name.startsWith(".") || e.name === "node_modules") continue;
      const full = resolve(dir, e.name);
      if (e.isDirectory()) walk(full);
      else if (e.isFile() && e.name.endsWith(".rpc")) out.push(full);
    }
  };
  for (const p of paths.length > 0 ? paths : ["."]) {
    const full = resolve(cwd, p);
    let isDir: boolean;
    try {
      isDir = statSync(full).isDirectory();
    } catch {
      throw new ProtocallError(`cannot read ${p}: no such file or directory`);
    }
    if (isDir) walk(full);
    else out.push(full);
  }
  return [...new Set(out)];
}

export const command: Command = {
  async run(args: string[], ctx: CliContext): Promise<number> {
    const a = parseCheckArgs(args);
    if (a.help) {
      ctx.stdout.write(help);
      return 0;
    }
    const files = collectFiles(ctx.cwd, a.paths);
    if (files.length === 0) {
      throw new ProtocallError(
        `no .rpc files in ${a.paths.length > 0 ? a.paths.join(", ") : "the current directory"}: name files or directories that hold them`,
      );
    }
    const [{ checkFiles, workspaceFolderOf }, { defaultSettings }] = await Promise.all([
      import("../../core/analysis/check-files"),
      import("../../core/analysis/settings"),
    ]);
    const settings = defaultSettings();
    settings.schemas = a.schemas.map((s) => resolve(ctx.cwd, s));
    settings.workspaceBuild = a.build;
    settings.reflection = a.reflect;
    if (a.env) settings.environment = a.env;
    if (a.envFile) settings.envFile = resolve(ctx.cwd, a.envFile);
    const folders = [...new Set(files.map((f) => workspaceFolderOf(f, existsSync)))];
    const { files: results, tried } = await checkFiles(files, {
      settings,
      folders,
      log: a.verbose ? (line) => ctx.stderr.write(`${line}\n`) : undefined,
    });
    const shown = (path: string) => {
      const rel = relative(ctx.cwd, path);
      return rel.startsWith("..") ? path : rel;
    };
    const counts = { error: 0, warning: 0, info: 0, hint: 0 } as Record<string, number>;
    let out = "";
    let schemaless = 0;
    for (const r of results) {
      if (r.problem) {
        counts.error++;
        out += `${shown(r.path)}:1:1: error: cannot read the file: ${r.problem}\n`;
      }
      const noSchema = a.allowNoSchema
        ? []
        : r.schemaless.map((x) => ({
            range: x.range,
            severity: 1 as const,
            message: `no schema found for service "${x.service}": its method, body and assertions were not checked (what was tried is printed at the end; --allow-no-schema allows this)`,
          }));
      schemaless += r.schemaless.length;
      const sorted = [...r.diagnostics, ...noSchema].sort(
        (x, y) =>
          x.range.start.line - y.range.start.line || x.range.start.character - y.range.start.character,
      );
      for (const d of sorted) {
        const severity = severityNames[d.severity ?? 1] ?? "error";
        counts[severity]++;
        out += `${shown(r.path)}:${d.range.start.line + 1}:${d.range.start.character + 1}: ${severity}: ${d.message}\n`;
      }
    }
    ctx.stdout.write(out);
    const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
    if (schemaless > 0) {
      ctx.stderr.write(
        `${a.allowNoSchema ? "note" : "protocall check"}: no schema was found for ${plural(schemaless, "request")}${a.allowNoSchema ? " (allowed by --allow-no-schema): only syntax, options and variables were checked" : ""}. Tried: ${triedText(a, tried, folders)}.${a.allowNoSchema ? "" : " Name a schema with --schema or # @schema, add the .proto files (with a buf.yaml) to the workspace, turn on --reflect, or pass --allow-no-schema."}\n`,
      );
    }
    const found = [
      plural(counts.error, "error"),
      plural(counts.warning, "warning"),
      ...(counts.info ? [`${counts.info} info`] : []),
      ...(counts.hint ? [plural(counts.hint, "hint")] : []),
    ];
    await new Promise<void>((done) =>
      ctx.stderr.write(`${plural(files.length, "file")} checked: ${found.join(", ")}\n`, () => done()),
    );
    return counts.error > 0 ? 1 : 0;
  },
};
