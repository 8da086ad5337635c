// buf writes compressed images when the output name ends in .gz or .zst; --schema takes them, told
// apart by their magic bytes, from a file or from stdin.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { after, before, describe, test } from "node:test";
import * as zlib from "node:zlib";
import { ProtocallError } from "../../../src/core/errors";
import { decompressSchemaBytes, detectCompression } from "../../../src/core/schema/compressed-input";
import { openSchema } from "../../../src/core/schema/open-schema";
import { runBuf } from "../../support/buf";
import { schemaFixturesDir } from "../../support/schema-fixtures";

const temp = mkdtempSync(join(tmpdir(), "protocall-compressed-"));
after(() => rmSync(temp, { recursive: true, force: true }));

const services = [
  "fixtures.editions.Configurator",
  "fixtures.options.AnnotatedService",
  "fixtures.v1.Greeter",
];
const options = { cwd: temp, stdin: Readable.from([]), cacheDir: false as const };

before(async () => {
  for (const name of ["set.binpb", "set.binpb.gz", "set.binpb.zst"]) {
    const r = await runBuf(["build", schemaFixturesDir, "-o", join(temp, name)], { timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stderr);
  }
});

async function listServices(spec: string, stdin?: Uint8Array): Promise<string[]> {
  const source = await openSchema(spec, {
    ...options,
    stdin: Readable.from(stdin ? [Buffer.from(stdin)] : []),
  });
  try {
    return await source.listServices();
  } finally {
    await source.close();
  }
}

describe("compressed images", () => {
  test("buf's .gz image opens, from a file under any name and from stdin", async () => {
    const gz = readFileSync(join(temp, "set.binpb.gz"));
    assert.equal(detectCompression(gz), "gzip");
    assert.deepEqual(await listServices("set.binpb.gz"), services);
    writeFileSync(join(temp, "renamed.pb"), gz);
    assert.deepEqual(await listServices("renamed.pb"), services);
    assert.deepEqual(await listServices("-", gz), services);
    assert.deepEqual(
      decompressSchemaBytes(gz, "x"),
      new Uint8Array(readFileSync(join(temp, "set.binpb"))),
      "the same bytes as the uncompressed image",
    );
  });

  test("buf's .zst image opens where Node.js reads zstd, and says what to do where it does not", async () => {
    const zst = readFileSync(join(temp, "set.binpb.zst"));
    assert.equal(detectCompression(zst), "zstd");
    if (typeof (zlib as { zstdDecompressSync?: unknown }).zstdDecompressSync === "function") {
      assert.deepEqual(await listServices("set.binpb.zst"), services);
    } else {
      await assert.rejects(listServices("set.binpb.zst"), (err: unknown) => {
        assert.ok(err instanceof ProtocallError);
        assert.match(
          err.message,
          /set\.binpb\.zst is zstd-compressed, which this Node\.js .* cannot read; decompress it first \(zstd -d\)/,
        );
        return true;
      });
    }
  });

  test("a truncated or damaged .gz is one clear error naming the input", async () => {
    const gz = readFileSync(join(temp, "set.binpb.gz"));
    writeFileSync(join(temp, "cut.binpb.gz"), gz.subarray(0, Math.floor(gz.length / 2)));
    await assert.rejects(listServices("cut.binpb.gz"), (err: unknown) => {
      assert.ok(err instanceof ProtocallError);
      assert.match(
        err.message,
        /^descriptor set .*cut\.binpb\.gz is gzip-compressed but cannot be decompressed \(.+\); is it truncated\?$/,
      );
      return true;
    });
    await assert.rejects(
      listServices("-", new Uint8Array([0x1f, 0x8b, 8, 0, 1, 2, 3])),
      /^ProtocallError: descriptor set from stdin is gzip-compressed but cannot be decompressed/,
    );
    // Content that decompresses but is no descriptor set is reported as such.
    writeFileSync(join(temp, "text.gz"), zlib.gzipSync("hello"));
    await assert.rejects(listServices("text.gz"), /text\.gz is not a descriptor set/);
  });

  test("uncompressed content is returned as it is", () => {
    const bytes = new Uint8Array([0x0a, 0x01, 0x02]);
    assert.equal(detectCompression(bytes), undefined);
    assert.equal(decompressSchemaBytes(bytes, "x"), bytes);
  });
});
