// The CliContext of the running process, and running a command's promise to an exit code.
import { isatty } from "node:tty";
import type { CliContext } from "./context";
import { reportError } from "./report-error";

/** The context of this process: its stdio, environment, working directory and signals. */
export function processContext(): CliContext {
  const signals = new Map<boolean, AbortSignal>();
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    // Created on first use: making process.stdin costs start-up time that most calls never need.
    get stdin() {
      return process.stdin;
    },
    get stdinIsTTY() {
      // fstat of descriptor 0 instead of process.stdin.isTTY, which would create the stream.
      return isatty(0);
    },
    env: process.env,
    cwd: process.cwd(),
    interrupted({ terminate = false } = {}) {
      let signal = signals.get(terminate);
      if (!signal) {
        const controller = new AbortController();
        const names: NodeJS.Signals[] = terminate ? ["SIGINT", "SIGTERM"] : ["SIGINT"];
        // Removed on the first signal, so a second one ends the process as it normally would.
        const stop = () => {
          for (const name of names) process.off(name, stop);
          controller.abort();
        };
        for (const name of names) process.on(name, stop);
        signal = controller.signal;
        signals.set(terminate, signal);
      }
      return signal;
    },
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
