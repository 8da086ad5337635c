// Shared pieces of the webhook tests: long-running CLI servers (first stdout line = URL) and polling.
import { type ChildProcess, spawn } from "node:child_process";
import { cliPath, repoRoot } from "../../support/cli";

export interface CliServer {
  readonly child: ChildProcess;
  /** The first line the command printed (its URL). */
  readonly url: string;
  /** Every stdout line so far, including the first. */
  readonly lines: string[];
  stderr(): string;
  /** SIGTERM, then SIGKILL after 3 s; resolves with the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL at once. */
  kill(): Promise<void>;
}

/** `openFiles` runs the command under that limit on open files (`ulimit -n`, through bash). */
export function startCliServer(
  args: string[],
  env: Record<string, string> = {},
  timeoutMs = 15_000,
  openFiles?: number,
): Promise<CliServer> {
  const [command, commandArgs] =
    openFiles === undefined
      ? [process.execPath, [cliPath, ...args]]
      : ["bash", ["-c", `ulimit -n ${openFiles} && exec "$0" "$@"`, process.execPath, cliPath, ...args]];
  const child = spawn(command, commandArgs, {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  let errText = "";
  let partial = "";
  child.stderr!.on("data", (c: Buffer) => {
    errText += c.toString("utf8");
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${args.join(" ")} did not start: ${errText}`));
    }, timeoutMs);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${args.join(" ")} exited with ${code}: ${errText}`));
    });
    child.stdout!.on("data", (c: Buffer) => {
      partial += c.toString("utf8");
      const parts = partial.split("\n");
      partial = parts.pop() ?? "";
      for (const line of parts) {
        lines.push(line);
        if (lines.length === 1) {
          clearTimeout(timer);
          resolve({
            child,
            url: line.trim(),
            lines,
            stderr: () => errText,
            async stop() {
              if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
              child.kill("SIGTERM");
              const t = setTimeout(() => child.kill("SIGKILL"), 3000);
              const code = await exited;
              clearTimeout(t);
              return code;
            },
            async kill() {
              if (child.exitCode !== null || child.signalCode !== null) return;
              child.kill("SIGKILL");
              await exited;
            },
          });
        }
      }
    });
  });
}

/**
 * Polls `check` every 20 ms until it returns a truthy value, or fails after `timeoutMs` (only a guard
 * against a hang: generous, for a busy machine).
 */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  what: string,
  timeoutMs = 60_000,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
