// The CliContext of the running process, and running a command's promise to an exit code.
import type { CliContext } from "./context";
import { reportError } from "./report-error";

/** The context of this process: its stdio, environment and working directory. */
export function processContext(): CliContext {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    // Created on first use: making process.stdin costs start-up time that most calls never need.
    get stdin() {
      return process.stdin;
    },
    env: process.env,
    cwd: process.cwd(),
  };
}

/** Sets the process exit code from a command's result; a rejection is reported as one line. */
export function exitWith(result: Promise<number>, ctx: CliContext): void {
  result.then(
    (code) => {
      process.exitCode = code;
    },
    (err) => {
      process.exitCode = reportError(err, ctx);
    },
  );
}
