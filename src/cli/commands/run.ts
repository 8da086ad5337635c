// `protocall run FILE.rpc [--name NAME] [--env ENV] [--env-file FILE]`: runs the requests of a request
// file in order, each exactly as `protocall curl` would (same output, same exit codes), and ends with a
// summary line on stderr. Requests are converted as the editor's Send converts them (prepareSend) and
// run through the same call pipeline, all writing to one stdout sink. Every request runs even after a
// failure; the exit code is the first failure's. Problems in the file (syntax, unknown options,
// undefined variables) are reported as `file:line:col: message` before anything is sent.
import { readFileSync } from "node:fs";
import { relative, resolve } from "node:path";
import { ProtocallError } from "../../core/errors";
import { defineFlags, flagsHelp, parseArgs } from "../args";
import type { CliContext, Command } from "../context";
import { callIo } from "../io";

const flags = defineFlags({
  env: { kind: "string", value: "ENV", help: "environment to select from the environment file" },
  "env-file": {
    kind: "string",
    value: "FILE",
    help: "environment file (default: protocall.env.json at the workspace root); its private companion is the same name with .private before .json",
  },
  name: {
    kind: "strings",
    value: "NAME",
    help: "run only the request with this name (the text after ###, or # @name); repeatable, in the given order",
  },
});

const help = `Run the requests of a .rpc request file, like \`protocall curl\` (same output, same exit codes).

Usage:
  protocall run FILE.rpc [flags]

Each request of the file runs in order; responses are printed on stdout as \`protocall curl\` prints
them. All requests run even if one fails; a summary line follows on stderr
(\`3 requests: 2 passed, 1 failed (not_found)\`), and the exit code is the first failure's
(the gRPC code × 8 for an RPC error, 1 for other errors), 0 when all pass. Ctrl-C cancels the
running request and skips the rest.

A request file holds requests separated by "### <name>" lines; a file without ### holds one:

  @host = http://localhost:8080          file variables, at the top
  ### Greet                              a request and its name
  # @protocol grpc                       options: protocall curl's long flags without dashes
  # @timeout 5s                          (a bool flag alone means true: # @insecure)
  {{host}}/demo.v1.GreetService/Greet    the URL, optionally after GRPC, GRPC-WEB or CONNECT
  Authorization: Bearer {{$dotenv TOKEN}}   headers, then an empty line

  {"name": "world"}                      the body: JSON documents (several for a client stream)
  < ./more.json                          or a file to include, relative to the .rpc file

Problems in the file (syntax, unknown request options, invalid values, undefined variables,
missing included files) are printed as FILE:LINE:COL: message, and nothing is sent (exit 1).

Variables: {{name}} is a file variable (\`@name = value\` at the top), else a variable of the
environment chosen with --env. Environments are read from protocall.env.json at the workspace root
(the nearest directory above the file with that file, else with .git), with values from
protocall.env.private.json (meant to be git-ignored, for secrets) overriding them; the "$shared"
environment holds defaults for all. {{$env NAME}}, {{$dotenv NAME}} (.env next to the file, then at
the workspace root), {{$uuid}}, {{$timestamp}}, {{$isoTimestamp}} and {{$randomInt MIN MAX}} are
built in. Relative paths (includes, @cacert, @schema, ...) are relative to the .rpc file.

Examples:
  protocall run requests.rpc
  protocall run requests.rpc --name "Greet a person"
  protocall run api.rpc --env staging
  protocall run api.rpc --env prod --env-file config/protocall.env.json

Flags:
${flagsHelp(flags)}`;

interface RunArgs {
  file?: string;
  names: string[];
  env?: string;
  envFile?: string;
  help: boolean;
}

function parseRunArgs(args: string[]): RunArgs {
  const { values, positionals, help } = parseArgs(args, flags, {
    command: "protocall run",
    positionals: Number.POSITIVE_INFINITY,
  });
  if (help) return { names: [], help };
  if (positionals.length === 0) {
    throw new ProtocallError(
      "no request file given: write `protocall run FILE.rpc` (see `protocall run --help`)",
    );
  }
  if (positionals.length > 1) {
    throw new ProtocallError(
      `too many arguments: expected one .rpc file, got ${positionals.map((p) => JSON.stringify(p)).join(", ")}`,
    );
  }
  return { file: positionals[0], names: values.name, env: values.env, envFile: values["env-file"], help };
}

const codeNames = [
  "ok",
  "canceled",
  "unknown",
  "invalid_argument",
  "deadline_exceeded",
  "not_found",
  "already_exists",
  "permission_denied",
  "resource_exhausted",
  "failed_precondition",
  "aborted",
  "out_of_range",
  "unimplemented",
  "internal",
  "unavailable",
  "data_loss",
  "unauthenticated",
];

/** How a failure shows in the summary: the RPC code name, or `exit N` for other failures. */
function failureName(code: number): string {
  if (code >= 8 && code % 8 === 0 && code / 8 < codeNames.length) return codeNames[code / 8];
  return `exit ${code}`;
}

export const command: Command = {
  async run(args: string[], ctx: CliContext): Promise<number> {
    const a = parseRunArgs(args);
    if (a.help || !a.file) {
      ctx.stdout.write(help);
      return 0;
    }
    const [{ parseRpcFile }, { prepareSend }, { runCurl }] = await Promise.all([
      import("../../core/rpcfile/parse"),
      import("../../core/rpcfile/prepare-send"),
      import("../../core/invoke/run-curl"),
    ]);
    const full = resolve(ctx.cwd, a.file);
    let text: string;
    try {
      text = readFileSync(full, "utf8");
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new ProtocallError(
        `cannot read ${a.file}: ${code === "ENOENT" ? "no such file" : code === "EISDIR" ? "it is a directory" : (code ?? (err as Error).message)}`,
      );
    }
    const shown = relative(ctx.cwd, full).startsWith("..") ? full : relative(ctx.cwd, full) || a.file;
    const where = (r: { start: { line: number; character: number } }) =>
      `${shown}:${r.start.line + 1}:${r.start.character + 1}`;

    const file = parseRpcFile(text);
    for (const d of file.diagnostics) {
      if (d.severity === "warning") ctx.stderr.write(`${where(d.range)}: warning: ${d.message}\n`);
    }
    const parseErrors = file.diagnostics.filter((d) => d.severity === "error");
    if (parseErrors.length > 0) {
      for (const d of parseErrors) ctx.stderr.write(`${where(d.range)}: ${d.message}\n`);
      return 1;
    }

    let requests = file.requests;
    if (a.names.length > 0) {
      requests = a.names.map((name) => {
        const found = file.requests.find((r) => r.name?.text === name);
        if (!found) {
          const known = file.requests.filter((r) => r.name).map((r) => JSON.stringify(r.name?.text));
          throw new ProtocallError(
            `${shown} has no request named ${JSON.stringify(name)}${known.length ? `; its requests: ${known.join(", ")}` : "; name requests with ### <name>"}`,
          );
        }
        return found;
      });
    }
    if (requests.length === 0) {
      throw new ProtocallError(`${shown} holds no request: add a request line (a URL) after ###`);
    }

    // The same conversion as the editor's Send. Every request is resolved before the first is
    // sent, so a typo in the last one sends nothing.
    const prepared = requests.map((r) =>
      prepareSend({
        text,
        parsed: file,
        filePath: full,
        requestIndex: r.index,
        environment: a.env,
        envFile: a.envFile,
        processEnv: ctx.env,
      }),
    );
    let problems = 0;
    for (const p of prepared) {
      for (const d of p.problems) {
        problems++;
        ctx.stderr.write(`${where(d.range)}: ${d.message}\n`);
      }
    }
    if (problems > 0) return 1;

    const failures: number[] = [];
    let ran = 0;
    for (const p of prepared) {
      // Relative paths of a request (data files, certificates) resolve against its file's directory.
      const io = callIo(ctx, p.baseDir);
      if (io.signal?.aborted) break;
      if (prepared.length > 1) ctx.stderr.write(`### ${p.label}\n`);
      const code = await runCurl(p.options as NonNullable<typeof p.options>, io);
      ran++;
      if (code !== 0) failures.push(code);
    }
    const total = prepared.length;
    const passed = ran - failures.length;
    let failedText =
      failures.length > 0 ? `, ${failures.length} failed (${failures.map(failureName).join(", ")})` : "";
    if (ran < total) failedText += `, ${total - ran} not run (interrupted)`;
    await new Promise<void>((done) =>
      ctx.stderr.write(`${total} request${total === 1 ? "" : "s"}: ${passed} passed${failedText}\n`, () =>
        done(),
      ),
    );
    return failures[0] ?? 0;
  },
};
