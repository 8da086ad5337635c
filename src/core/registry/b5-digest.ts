// The b5 digest of a registry module, exactly as the buf CLI computes and checks it: which files of a
// module count (every .proto file, LICENSE, and the first of buf.md, README.md, README.markdown), the
// manifest of those files, and the digest over the manifest plus the digests of every dependency,
// direct and transitive. The registry emulator stamps commits with it, and a client verifies
// downloaded modules with it (a mismatch means corrupted or tampered content).
//
// Definition (H = SHAKE256 with a 64-byte output, lowercase hex):
//   manifest = for each module file, sorted by path in byte order: "shake256:" H(content) "  " path "\n"
//   F        = H(manifest)
//   b5       = H(join("\n", ["shake256:" F] + sorted(["b5:" hex of each dependency's b5])))
// The module's name, its commit id and the dependencies' names do not enter the digest.
import { createHash } from "node:crypto";

/** Digest length in bytes (SHAKE256 with 512 bits of output). */
export const b5Length = 64;

/** The doc files a module may have; only the first one present counts. */
export const docFileNames = ["buf.md", "README.md", "README.markdown"] as const;

export interface ModuleFile {
  /** Relative, `/`-separated path inside the module. */
  readonly path: string;
  readonly content: Uint8Array;
}

/** What a file is to the registry: a .proto file, the doc file, the license, or not a module file. */
export type ModuleFileKind = "proto" | "doc" | "license" | undefined;

export function moduleFileKind(path: string): ModuleFileKind {
  if (path.endsWith(".proto")) return "proto";
  if (path === "LICENSE") return "license";
  if ((docFileNames as readonly string[]).includes(path)) return "doc";
  return undefined;
}

/**
 * The files that make up a module, as buf selects them: every .proto file, LICENSE, and the first doc
 * file in the order buf.md, README.md, README.markdown. Other files are left out.
 */
export function selectModuleFiles<T extends { readonly path: string }>(files: readonly T[]): T[] {
  const doc = docFileNames.find((name) => files.some((f) => f.path === name));
  return files.filter((f) => {
    const kind = moduleFileKind(f.path);
    return kind === "proto" || kind === "license" || (kind === "doc" && f.path === doc);
  });
}

function shake256(data: Uint8Array | string): Buffer {
  return createHash("shake256", { outputLength: b5Length }).update(data).digest();
}

function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}

/** The manifest text of a module's files (one line per file, sorted by path, each ending in "\n"). */
export function moduleManifest(files: readonly ModuleFile[]): string {
  return selectModuleFiles(files)
    .map((f) => ({ path: f.path, hash: shake256(f.content).toString("hex") }))
    .sort((a, b) => byteOrder(a.path, b.path))
    .map((f) => `shake256:${f.hash}  ${f.path}\n`)
    .join("");
}

/** The files digest F: SHAKE256 of the manifest. */
export function filesDigest(files: readonly ModuleFile[]): Uint8Array {
  return shake256(moduleManifest(files));
}

/**
 * The b5 digest of a module whose files are `files` and whose dependencies (direct and transitive,
 * each listed once) have the b5 digests `dependencyDigests` (raw 64-byte values or `b5:<hex>` text).
 */
export function b5Digest(
  files: readonly ModuleFile[],
  dependencyDigests: readonly (Uint8Array | string)[] = [],
): Uint8Array {
  const deps = [
    ...new Set(dependencyDigests.map((d) => formatB5(typeof d === "string" ? parseB5(d) : d))),
  ].sort(byteOrder);
  const f = Buffer.from(filesDigest(files)).toString("hex");
  return shake256([`shake256:${f}`, ...deps].join("\n"));
}

/** `b5:<128 hex digits>`, as buf.lock and buf's messages write a digest. */
export function formatB5(value: Uint8Array): string {
  return `b5:${Buffer.from(value).toString("hex")}`;
}

/** Reads `b5:<128 hex digits>`; throws an Error saying what is wrong otherwise. */
export function parseB5(text: string): Uint8Array {
  const m = /^b5:([0-9a-f]{128})$/.exec(text.trim());
  if (!m) throw new Error(`"${text}" is not a b5 digest (b5: followed by 128 lowercase hex digits)`);
  return Buffer.from(m[1], "hex");
}

/** Whether two digests are the same value. */
export function sameDigest(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.from(a).equals(Buffer.from(b));
}
