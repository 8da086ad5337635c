// The real buf binary from node_modules, the peer of the parity tests.
import { mkdtempSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { type RunOptions, type RunResult, runProcess } from "./cli";

const require = createRequire(__filename);
const arch = process.arch === "x64" ? "x64" : process.arch;

/** Path of the buf executable shipped by @bufbuild/buf for this platform. */
export const bufPath = join(
  dirname(require.resolve(`@bufbuild/buf-${process.platform}-${arch}/package.json`)),
  "bin",
  "buf",
);

let cacheDir: string | undefined;

/** Runs `buf <args>` with a private cache directory (no network, no user configuration). */
export function runBuf(args: string[], options: RunOptions = {}): Promise<RunResult> {
  cacheDir ??= mkdtempSync(join(tmpdir(), "protocall-buf-cache-"));
  return runProcess(bufPath, args, { ...options, env: { BUF_CACHE_DIR: cacheDir, ...options.env } });
}

/** Runs `buf curl <args>`. */
export function runBufCurl(args: string[], options: RunOptions = {}): Promise<RunResult> {
  return runBuf(["curl", ...args], options);
}
