// `protocall build <dir> -o <file>`: compiles a workspace to a binary FileDescriptorSet.
import { stat, writeFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { gzipSync } from "node:zlib";
import { createFileRegistry, type FileRegistry, fromBinary, toJsonString } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { errorMessage, ProtocallError } from "../../core/errors";
import { buildWorkspace } from "../../core/schema/compiler";
import { CompilerError, formatDiagnostic } from "../../core/schema/compiler-diagnostics";
import { defineFlags, flagsHelp, parseArgs } from "../args";
import type { CliContext, Command } from "../context";

const flags = defineFlags({
  output: {
    kind: "string",
    short: "o",
    value: "FILE",
    help: 'write the set to FILE: binary, JSON when FILE ends in .json, gzip-compressed binary when it ends in .gz; "-" writes it to stdout',
  },
  "exclude-source-info": { kind: "bool", help: "leave out source code info (comments and spans)" },
});

const help = `Build a directory of .proto files to a FileDescriptorSet, with the buf compiler.

Usage: protocall build [<dir> | <file.proto> | <REMOTE/owner/module[:ref]>] [-o <file>] [--exclude-source-info]

<dir> is a buf workspace or module (buf.yaml, buf.work.yaml) or a plain folder of .proto files;
it defaults to the current directory. A single .proto file builds within its workspace, with only
the files it imports. A module of a schema registry (buf.example.com/acme/weather:v1) is fetched
as buf fetches it (token from PROTOCALL_TOKEN, BUF_TOKEN or ~/.netrc; trust from SSL_CERT_FILE),
verified, built with its dependencies and cached by commit. The set includes every imported file, and source code info
(comments) unless --exclude-source-info is given. Without -o the build is only checked.
Compiler errors are printed one per line as file:line:column: message, and the exit code is 1.

Flags:
${flagsHelp(flags)}
Examples:
  protocall build proto -o api.binpb
  protocall build . -o - --exclude-source-info > api.binpb
  protocall build proto/acme/v1/orders.proto -o orders.binpb
  protocall build buf.example.com/acme/weather:v1 -o weather.binpb
  protocall curl --schema api.binpb http://localhost:8080/demo.v1.GreetService/Greet
`;

export const command: Command = {
  async run(args: string[], ctx: CliContext): Promise<number> {
    const {
      values,
      positionals,
      help: helpWanted,
    } = parseArgs(args, flags, {
      command: "protocall build",
      positionals: Number.POSITIVE_INFINITY,
    });
    if (helpWanted) {
      ctx.stdout.write(help);
      return 0;
    }
    if (positionals.length > 1) {
      throw new ProtocallError(
        `build takes one directory or .proto file, got ${positionals.length}: ${positionals.join(" ")}; run \`protocall build --help\` for usage`,
      );
    }
    const dir = positionals[0] ?? ".";
    const output = values.output;
    if (output === "") throw new ProtocallError("build: -o needs a file name, or - for stdout");
    if (output?.endsWith(".zst")) {
      throw new ProtocallError(
        `build: cannot write ${output}: zstd output is not supported; name the file .binpb, or .gz to compress it`,
      );
    }

    let bytes: Uint8Array;
    const module = await registryModule(dir, ctx.cwd);
    try {
      const excludeSourceInfo = values["exclude-source-info"] === true;
      bytes = module
        ? await module.moduleSchemaBytes(module.ref, { env: ctx.env, cwd: ctx.cwd, excludeSourceInfo })
        : (await buildWorkspace(dir, { cwd: ctx.cwd, env: ctx.env, excludeSourceInfo })).bytes;
    } catch (err) {
      if (!(err instanceof CompilerError)) throw err;
      for (const d of err.diagnostics) ctx.stderr.write(`${formatDiagnostic(d)}\n`);
      const count = err.diagnostics.length === 1 ? "1 error" : `${err.diagnostics.length} errors`;
      const hint = err.hint ? `; ${err.hint}` : "";
      ctx.stderr.write(
        `protocall: build of ${dir} failed with ${count}; fix the files above and build again${hint}\n`,
      );
      return 1;
    }

    if (output === undefined) return 0;
    const content = encodeOutput(bytes, output);
    if (output === "-") {
      await new Promise<void>((done, fail) => ctx.stdout.write(content, (err) => (err ? fail(err) : done())));
      return 0;
    }
    try {
      await writeFile(resolve(ctx.cwd, output), content);
    } catch (err) {
      throw new ProtocallError(`cannot write ${output}: ${writeProblem(err, output)}`);
    }
    return 0;
  },
};

/** The registry module `dir` names when no file or directory has that name, with the code to load it. */
async function registryModule(dir: string, cwd: string) {
  const { parseModuleRef } = await import("../../core/schema/module-ref");
  const ref = parseModuleRef(dir);
  if (!ref || (await stat(resolve(cwd, dir)).catch(() => undefined))) return undefined;
  const { moduleSchemaBytes } = await import("../../core/registry/module-schema");
  return { ref, moduleSchemaBytes };
}

/**
 * The set as the output's name asks for it, as buf does: JSON for .json (custom options written as
 * "[full.name]" keys, which needs the set's own extensions), gzip for .gz, else binary.
 */
function encodeOutput(bytes: Uint8Array, output: string): Uint8Array | string {
  if (output.endsWith(".json")) {
    const set = fromBinary(FileDescriptorSetSchema, bytes);
    let registry: FileRegistry | undefined;
    try {
      registry = createFileRegistry(set);
    } catch {
      registry = undefined; // custom options are then left out; the rest is written
    }
    return `${toJsonString(FileDescriptorSetSchema, set, { prettySpaces: 2, registry })}\n`;
  }
  if (output.endsWith(".gz")) return gzipSync(bytes);
  return bytes;
}

/** Why the output file could not be written, in words. */
function writeProblem(err: unknown, output: string): string {
  switch ((err as NodeJS.ErrnoException).code) {
    case "ENOENT":
      return `its directory ${dirname(output)} does not exist; create it or choose another path`;
    case "ENOTDIR":
      return "a part of its path is a file, not a directory; choose another path";
    case "EISDIR":
      return "it is a directory; name a file, such as set.binpb";
    case "EACCES":
    case "EPERM":
    case "EROFS":
      return "permission denied; choose a path you can write to";
    default:
      return (err as NodeJS.ErrnoException).code ?? errorMessage(err);
  }
}
