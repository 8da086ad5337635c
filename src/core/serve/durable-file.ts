// What the durable files (the listener's event store, the registry emulator's state) share: one
// writer per file — `<file>.lock` holds the writer's process id, created exclusively; a lock left by
// a process that no longer runs (killed) is taken over, one held by a running process is refused with
// what to do — and the atomic replacement of a file by a new one written beside it.
import { closeSync, fsyncSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { rename } from "node:fs/promises";
import { dirname } from "node:path";
import { errorMessage, ProtocallError } from "../errors";

export interface LockNames {
  /** What the file is, in messages: `event store`, `registry state`. */
  readonly what: string;
  /** Who else may hold it: `another \`protocall listen\`?`. */
  readonly holder: string;
  /** How to go on: `stop it, or pass another --store`. */
  readonly fix: string;
}

/** Takes the lock of `file`, or throws ProtocallError saying who holds it. */
export function lockFile(file: string, names: LockNames): void {
  const path = `${file}.lock`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, "wx");
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") {
        throw new ProtocallError(`cannot lock ${names.what} ${file}: ${errorMessage(err)}`);
      }
    }
    let pid = 0;
    try {
      pid = Number(readFileSync(path, "utf8").trim());
    } catch {
      // Removed in between: try again.
    }
    if (pid === process.pid) {
      throw new ProtocallError(`${names.what} ${file} is already open in this process`);
    }
    if (Number.isInteger(pid) && pid > 0 && isRunning(pid)) {
      throw new ProtocallError(
        `${names.what} ${file} is in use by process ${pid} (${names.holder}): ${names.fix}`,
      );
    }
    rmSync(path, { force: true });
  }
  throw new ProtocallError(`cannot lock ${names.what} ${file}: another process keeps taking the lock`);
}

/** Releases the lock of `file` if this process holds it. */
export function unlockFile(file: string): void {
  try {
    if (readFileSync(`${file}.lock`, "utf8").trim() === String(process.pid))
      rmSync(`${file}.lock`, { force: true });
  } catch {
    // Already gone.
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Renames a written and synced `tmp` over `file`, then syncs the directory so the rename itself
 * survives a crash (where the platform can sync a directory; the rename is atomic regardless).
 */
export async function renameDurably(tmp: string, file: string): Promise<void> {
  await rename(tmp, file);
  try {
    const dir = openSync(dirname(file), "r");
    fsyncSync(dir);
    closeSync(dir);
  } catch {
    // Some platforms cannot fsync a directory.
  }
}
