// The opt-in token cache file of the CLI (`cache=PATH` in --auth): tokens outlive the process, so a
// script of many `protocall curl` calls signs in once. The file holds bearer and refresh tokens, so it
// is created with 0600 permissions and set back to 0600 whenever it is written; entries are keyed by a
// hash of whose token it is (token-source.ts storeKey), never by the client secret.
import { chmod, mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { ProtocallError } from "../errors";
import type { StoredToken, TokenStore } from "./token-source";

interface CacheFile {
  version: 1;
  tokens: Record<string, StoredToken>;
}

export function fileTokenStore(path: string, cwd: string): TokenStore {
  const file = resolve(cwd, path);
  const read = async (): Promise<CacheFile> => {
    let text: string;
    try {
      text = await readFile(file, "utf8");
    } catch {
      return { version: 1, tokens: {} };
    }
    try {
      const parsed = JSON.parse(text) as CacheFile;
      if (parsed?.version === 1 && parsed.tokens && typeof parsed.tokens === "object") return parsed;
    } catch {}
    // A file we cannot read as ours is replaced on the next write rather than failing the call.
    return { version: 1, tokens: {} };
  };
  return {
    async get(key) {
      const t = (await read()).tokens[key];
      return t && typeof t.accessToken === "string" ? t : undefined;
    },
    async set(key, token) {
      const content = await read();
      content.tokens[key] = token;
      try {
        await mkdir(dirname(file), { recursive: true, mode: 0o700 });
        const temp = `${file}.${process.pid}.tmp`;
        await writeFile(temp, `${JSON.stringify(content, null, 2)}\n`, { mode: 0o600 });
        await chmod(temp, 0o600);
        await rename(temp, file);
      } catch (err) {
        throw new ProtocallError(
          `cannot write the token cache ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}; fix its directory or drop cache= from --auth`,
        );
      }
    },
  };
}
