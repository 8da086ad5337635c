// Locates the `buf` compiler: a configured path first, then the binary shipped for this platform in
// the @bufbuild/buf package, then `buf` on PATH.
import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";
import { arch, endianness } from "node:os";
import { delimiter, isAbsolute, join, resolve } from "node:path";
import { ProtocallError } from "../errors";

const platformPackages: Record<string, string> = {
  "darwin arm64": "@bufbuild/buf-darwin-arm64",
  "darwin x64": "@bufbuild/buf-darwin-x64",
  "linux arm64": "@bufbuild/buf-linux-aarch64",
  "linux arm": "@bufbuild/buf-linux-armv7",
  "linux x64": "@bufbuild/buf-linux-x64",
  "win32 arm64": "@bufbuild/buf-win32-arm64",
  "win32 x64": "@bufbuild/buf-win32-x64",
};

/** The package @bufbuild/buf installs for this platform and the binary inside it, or undefined. */
export function bundledBufPackage(): { pkg: string; bin: string } | undefined {
  if (endianness() !== "LE") return undefined;
  const pkg = platformPackages[`${process.platform} ${arch()}`];
  if (!pkg) return undefined;
  return { pkg, bin: process.platform === "win32" ? "bin/buf.exe" : "bin/buf" };
}

/** The path of the bundled buf binary when its platform package is installed, else undefined. */
export function bundledBufPath(): string | undefined {
  const found = bundledBufPackage();
  if (!found || typeof require !== "function") return undefined;
  try {
    // The platform packages have no "exports" map, so their files resolve directly; no install
    // script is needed for the binary to be there.
    return require.resolve(`${found.pkg}/${found.bin}`);
  } catch {
    return undefined;
  }
}

async function isExecutableFile(path: string): Promise<boolean> {
  try {
    const st = await stat(path);
    if (!st.isFile()) return false;
    if (process.platform !== "win32") await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Finds an executable by name in the directories of `env.PATH` (with PATHEXT on Windows). */
export async function findOnPath(name: string, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const pathValue = env.PATH ?? env.Path ?? "";
  const exts =
    process.platform === "win32" ? (env.PATHEXT ?? ".EXE;.CMD;.BAT;.COM").split(";").filter(Boolean) : [""];
  for (const dir of pathValue.split(delimiter)) {
    if (dir === "") continue;
    for (const ext of exts) {
      const candidate = join(dir, name + ext);
      if (await isExecutableFile(candidate)) return candidate;
    }
  }
  return undefined;
}

/**
 * Returns the path of the buf binary to run. A configured `bufPath` must exist: a wrong setting is an
 * error rather than silently running a different buf.
 */
export async function findBuf(
  options: {
    bufPath?: string;
    env?: NodeJS.ProcessEnv;
    /** false skips the buf bundled with Protocall (for users who want the buf on their PATH). */
    useBundled?: boolean;
  } = {},
): Promise<string> {
  const env = options.env ?? process.env;
  if (options.bufPath) {
    const configured = isAbsolute(options.bufPath) ? options.bufPath : resolve(options.bufPath);
    if (await isExecutableFile(configured)) return configured;
    // A bare name such as "buf" or "buf-1.50" is looked up on PATH.
    if (!/[\\/]/.test(options.bufPath)) {
      const onPath = await findOnPath(options.bufPath, env);
      if (onPath) return onPath;
    }
    throw new ProtocallError(
      `the configured buf binary ${options.bufPath} does not exist or is not executable; ` +
        "fix the configured path or remove it to use the buf bundled with Protocall",
    );
  }
  const bundled = options.useBundled === false ? undefined : bundledBufPath();
  if (bundled && (await isExecutableFile(bundled))) return bundled;
  const onPath = await findOnPath("buf", env);
  if (onPath) return onPath;
  const pkg = bundledBufPackage();
  const bundledWhy =
    options.useBundled === false
      ? "the bundled buf is turned off"
      : pkg
        ? `the package ${pkg.pkg} is not installed`
        : `no bundled buf exists for ${process.platform} ${arch()}`;
  throw new ProtocallError(
    `cannot find the buf compiler: no buf path is configured, ${bundledWhy}, and there is no buf on PATH ` +
      `(${env.PATH ?? env.Path ?? ""}); install buf or configure its path`,
  );
}
