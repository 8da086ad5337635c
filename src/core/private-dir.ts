// Whether a cache directory is ours alone: owned by this user and writable by no one else. What the
// caches (schema builds, registry modules) read from a directory that others can write could be
// anything, so such a directory is not used.
import { stat } from "node:fs/promises";

/** Whether `dir` is a directory owned by this user and writable by no one else (always, on Windows). */
export async function isPrivateDir(dir: string): Promise<boolean> {
  const st = await stat(dir).catch(() => undefined);
  if (!st?.isDirectory()) return false;
  if (process.platform === "win32") return true;
  const uid = process.getuid?.();
  return (uid === undefined || st.uid === uid) && (st.mode & 0o022) === 0;
}
