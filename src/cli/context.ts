import type { Readable, Writable } from "node:stream";

/** Everything a command needs from its process, so tests can run commands in-process too. */
export interface CliContext {
  readonly stdout: Writable;
  readonly stderr: Writable;
  readonly stdin: Readable;
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
}

/** A CLI command: parses its own arguments and returns the exit code. */
export interface Command {
  run(args: string[], ctx: CliContext): Promise<number>;
}
