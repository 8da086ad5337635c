// Runs the built CLI (dist/cli.js, built by `npm test`) or any other program as a child process,
// bounded by a timeout, and collects its exit code and output.
import { spawn } from "node:child_process";
import { dirname, join, resolve } from "node:path";

export const repoRoot = resolve(dirname(__filename), "../..");
export const cliPath = join(repoRoot, "dist/cli.js");

export interface RunOptions {
  /** Written to the child's stdin, which is then closed; stdin is empty when undefined. */
  stdin?: string | Uint8Array;
  /** Added to (and overriding) the parent's environment; a value of `undefined` removes a variable. */
  env?: Record<string, string | undefined>;
  cwd?: string;
  /** Kills the child after this long (default 30 s); the result then has `timedOut: true`. */
  timeoutMs?: number;
  /**
   * Sends SIGINT (as Ctrl-C does) once the child's stderr matches; stdin then stays open until the
   * child exits, so a call reading it is still running when interrupted.
   */
  interruptWhen?: RegExp;
  /** With `interruptWhen`: closes stdin this long after the interrupt (default: when the child exits). */
  closeStdinAfterInterruptMs?: number;
}

export interface RunResult {
  /** The exit code; 128 + signal number when killed by a signal. */
  code: number;
  stdout: string;
  stderr: string;
  stdoutBytes: Buffer;
  timedOut: boolean;
  /** Wall time in milliseconds. */
  ms: number;
}

const signals: Record<string, number> = { SIGKILL: 9, SIGTERM: 15, SIGINT: 2 };

export function runProcess(command: string, args: string[], options: RunOptions = {}): Promise<RunResult> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const [k, v] of Object.entries(options.env ?? {})) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  const start = performance.now();
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd ?? repoRoot,
      env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let timedOut = false;
    const timer = setTimeout(() => {
      // Decided after this turn's I/O: on a starved machine the timer and the child's exit can be
      // due together, and a child that has already exited did not time out.
      setImmediate(() => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        timedOut = true;
        child.kill("SIGKILL");
      });
    }, options.timeoutMs ?? 30_000);
    child.stdout.on("data", (c: Buffer) => out.push(c));
    let interrupted = false;
    child.stderr.on("data", (c: Buffer) => {
      err.push(c);
      if (
        options.interruptWhen &&
        !interrupted &&
        options.interruptWhen.test(Buffer.concat(err).toString())
      ) {
        interrupted = true;
        child.kill("SIGINT");
        const after = options.closeStdinAfterInterruptMs;
        if (after !== undefined) setTimeout(() => child.stdin.end(), after).unref();
      }
    });
    child.stdin.on("error", () => {}); // the child may exit without reading its input
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const stdoutBytes = Buffer.concat(out);
      resolvePromise({
        code: code ?? 128 + (signal ? (signals[signal] ?? 1) : 1),
        stdout: stdoutBytes.toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
        stdoutBytes,
        timedOut,
        ms: performance.now() - start,
      });
    });
    if (options.interruptWhen) child.stdin.write(options.stdin ?? "");
    else child.stdin.end(options.stdin ?? "");
  });
}

/** Runs `node dist/cli.js <args>`. */
export function runCli(args: string[], options: RunOptions = {}): Promise<RunResult> {
  return runProcess(process.execPath, [cliPath, ...args], options);
}
