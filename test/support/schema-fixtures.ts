// Builds the schema fixtures (test/fixtures/schema, a buf module) with the real buf binary and loads
// them into a FileRegistry with source info. Built once per test process.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { createFileRegistry, type FileRegistry, fromBinary } from "@bufbuild/protobuf";
import { type FileDescriptorSet, FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";

export const schemaFixturesDir = resolve(__dirname, "../fixtures/schema");
export const bufBinary = resolve(__dirname, "../../node_modules/@bufbuild/buf-linux-x64/bin/buf");

let built: Promise<{ set: FileDescriptorSet; bytes: Uint8Array }> | undefined;

/** The fixtures compiled by `buf build` (imports and source info included). */
export function buildSchemaFixtures(): Promise<{ set: FileDescriptorSet; bytes: Uint8Array }> {
  built ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), "protocall-fixtures-"));
    try {
      const out = join(dir, "set.binpb");
      await promisify(execFile)(bufBinary, ["build", schemaFixturesDir, "-o", out], { timeout: 60_000 });
      const bytes = new Uint8Array(readFileSync(out));
      return { set: fromBinary(FileDescriptorSetSchema, bytes), bytes };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  })();
  return built;
}

/** A FileRegistry of the fixtures. */
export async function schemaFixturesRegistry(): Promise<FileRegistry> {
  return createFileRegistry((await buildSchemaFixtures()).set);
}
