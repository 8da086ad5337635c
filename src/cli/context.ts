import type { Readable, Writable } from "node:stream";

/** Everything a command needs from its process, so tests can run commands in-process too. */
export interface CliContext {
  readonly stdout: Writable;
  readonly stderr: Writable;
  readonly stdin: Readable;
  /** Whether standard input is a terminal; reading it does not create `stdin`. */
  readonly stdinIsTTY: boolean;
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  /**
   * A signal aborted when the user stops the command: on Ctrl-C (SIGINT), and with `terminate` on
   * SIGTERM too (servers shut down cleanly on either). Only commands that ask for it handle the
   * signal; a second signal ends the process as usual.
   */
  interrupted(options?: { terminate?: boolean }): AbortSignal;
}

/** A CLI command: parses its own arguments and returns the exit code. */
export interface Command {
  run(args: string[], ctx: CliContext): Promise<number>;
}
