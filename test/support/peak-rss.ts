// Runs a command and reports its exit code, stderr, wall time and peak RSS (VmHWM, polled from /proc).
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";

export interface PeakRun {
  code: number;
  stderr: string;
  ms: number;
  peakMb: number;
}

export function peakRun(command: string, args: string[], timeoutMs = 60_000): Promise<PeakRun> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn(command, args, { stdio: ["ignore", "ignore", "pipe"] });
    let peakKb = 0;
    const poll = setInterval(() => {
      try {
        const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"));
        if (m) peakKb = Math.max(peakKb, Number(m[1]));
      } catch {
        // the process has ended
      }
    }, 5);
    const guard = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    const err: Buffer[] = [];
    child.stderr.on("data", (c: Buffer) => err.push(c));
    child.on("error", reject);
    child.on("close", (code) => {
      clearInterval(poll);
      clearTimeout(guard);
      resolve({
        code: code ?? -1,
        stderr: Buffer.concat(err).toString(),
        ms: Math.round(performance.now() - start),
        peakMb: Math.round(peakKb / 1024),
      });
    });
  });
}
