// The I/O of the commands that make calls or serve (curl, run, webhook, listen, registry), set up in
// one place from the CliContext: what a call reads and writes (stdio, environment, working directory,
// home directory, a password prompt on a terminal), the Ctrl-C signal that cancels it, waiting for a
// server to be stopped, and reading the files and standard input that flags name, with errors that
// say which flag named what.
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { resolve } from "node:path";
import { errorMessage, ProtocallError } from "../core/errors";
import { cliTokens } from "./auth-interaction";
import type { CliContext } from "./context";
import type { CurlIo } from "./run-curl";
import { version } from "./version";

/**
 * What `runCurl` needs, for a call made by this command: relative paths resolve against `cwd` (the
 * .rpc file's directory for `protocall run`), Ctrl-C cancels the call, a password is asked for on the
 * terminal only. `stdin` is created only if the call reads it.
 */
export function callIo(ctx: CliContext, cwd = ctx.cwd): CurlIo {
  const stdinIsTTY = ctx.stdinIsTTY;
  return {
    cwd,
    env: ctx.env,
    get stdin() {
      return ctx.stdin;
    },
    stdinIsTTY,
    promptPassword: stdinIsTTY
      ? async (prompt) =>
          (await import("../core/invoke/prompt-password")).promptPassword(prompt, ctx.stdin, ctx.stderr)
      : undefined,
    homedir: homeDirectory(ctx),
    tokens: cliTokens(ctx),
    stdout: ctx.stdout,
    stderr: ctx.stderr,
    product: `protocall/${version}`,
    signal: ctx.interrupted(),
  };
}

/** The user's home directory: $HOME when set, else the system's idea of it. */
export function homeDirectory(ctx: CliContext): string {
  return ctx.env.HOME || homedir();
}

/** Resolves when the user stops a server (Ctrl-C or SIGTERM). */
export function untilStopped(ctx: CliContext): Promise<void> {
  const signal = ctx.interrupted({ terminate: true });
  if (signal.aborted) return Promise.resolve();
  return new Promise((done) => signal.addEventListener("abort", () => done(), { once: true }));
}

/** Reads a text file named by `flag` (relative to the working directory); one-line error if it cannot. */
export function readFlagFile(ctx: CliContext, file: string, flag: string): string {
  try {
    return readFileSync(resolve(ctx.cwd, file), "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === "ENOENT"
        ? "no such file"
        : code === "EISDIR"
          ? "it is a directory"
          : code === "EACCES"
            ? "permission denied"
            : errorMessage(err);
    throw new ProtocallError(`cannot read ${flag} file ${file}: ${why}`);
  }
}

/** Reads all of standard input as text. */
export async function readStdin(ctx: CliContext): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of ctx.stdin) chunks.push(typeof c === "string" ? Buffer.from(c) : (c as Buffer));
  return Buffer.concat(chunks).toString("utf8");
}
