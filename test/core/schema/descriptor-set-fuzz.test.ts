// Feeds the descriptor-set loader random bytes and damaged real sets. Whatever the input, the loader
// must either work or throw a ProtocallError: never another error, never a hang.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { before, test } from "node:test";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { CodeGeneratorRequestSchema, FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { ProtocallError } from "../../../src/core/errors";
import {
  type DescriptorSetSource,
  openDescriptorSetBytes,
  openDescriptorSetFile,
} from "../../../src/core/schema/descriptor-set-source";
import { acmeFiles, buildSet } from "./descriptor-set-fixtures";

/** Deterministic PRNG (mulberry32), so a failure can be replayed from its seed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

let seeds: Uint8Array[];

before(async () => {
  const image = await buildSet(acmeFiles);
  const plain = await buildSet(acmeFiles, ["--as-file-descriptor-set", "--exclude-source-info"]);
  const set = fromBinary(FileDescriptorSetSchema, image);
  const request = toBinary(
    CodeGeneratorRequestSchema,
    create(CodeGeneratorRequestSchema, {
      fileToGenerate: ["acme/v1/shop.proto"],
      parameter: "p",
      protoFile: set.file,
    }),
  );
  const json = await buildSet(acmeFiles, ["--exclude-source-info"], "set.json");
  seeds = [image, plain, request, json];
});

/** Uses a source every way a caller can; returns normally or throws what the source threw. */
async function exercise(source: DescriptorSetSource): Promise<void> {
  try {
    const services = await source.listServices();
    for (const name of services.slice(0, 4)) await source.findType(name);
    for (const file of source.index.listFiles()) {
      const first = source.index.file(file)?.types[0];
      if (first !== undefined) await source.findType(first);
    }
    const documented = source.index.file("acme/v1/common.proto")?.types[0];
    if (documented !== undefined) await source.findFile(documented);
    await source.findExtension("google.protobuf.MethodOptions", 50001);
    await source.findType("acme.v1.BuyRequest");
  } finally {
    await source.close();
  }
}

function mutate(random: () => number, input: Uint8Array): Uint8Array {
  const pick = (n: number) => Math.floor(random() * n);
  const bytes = new Uint8Array(input);
  switch (pick(6)) {
    case 0: {
      // Flip a few bits.
      for (let i = 1 + pick(4); i > 0; i--) bytes[pick(bytes.length)] ^= 1 << pick(8);
      return bytes;
    }
    case 1:
      // Truncate.
      return bytes.subarray(0, pick(bytes.length));
    case 2: {
      // Splice the head of one seed onto the tail of another.
      const other = seeds[pick(seeds.length)];
      return new Uint8Array([
        ...bytes.subarray(0, pick(bytes.length)),
        ...other.subarray(pick(other.length)),
      ]);
    }
    case 3: {
      // Overwrite a run with random bytes.
      const at = pick(bytes.length);
      for (let i = at; i < Math.min(bytes.length, at + 1 + pick(16)); i++) bytes[i] = pick(256);
      return bytes;
    }
    case 4: {
      // Insert or delete a byte (shifts every later length).
      const at = pick(bytes.length);
      return random() < 0.5
        ? new Uint8Array([...bytes.subarray(0, at), pick(256), ...bytes.subarray(at)])
        : new Uint8Array([...bytes.subarray(0, at), ...bytes.subarray(at + 1)]);
    }
    default: {
      // Set a byte to a boundary value (lengths, wire types).
      bytes[pick(bytes.length)] = [0x00, 0x7f, 0x80, 0xff, 0x0a, 0x0f][pick(6)];
      return bytes;
    }
  }
}

async function check(bytes: Uint8Array, what: string): Promise<"ok" | "rejected"> {
  try {
    await exercise(openDescriptorSetBytes(bytes, "fuzz"));
    return "ok";
  } catch (err) {
    if (err instanceof ProtocallError) return "rejected";
    const hex = Buffer.from(bytes.subarray(0, 64)).toString("hex");
    assert.fail(`${what}: threw ${String(err)} (first bytes ${hex})\n${(err as Error)?.stack ?? ""}`);
  }
}

// A fixed number of inputs (not a time budget: a busy machine must run the same cases); a hang
// fails the test by its timeout instead of stalling the suite.
test("random bytes and damaged real sets: only ProtocallErrors, bounded in time", {
  timeout: 120_000,
}, async () => {
  const random = rng(0x5eed);
  const counts = { ok: 0, rejected: 0 };
  for (let runs = 1; runs <= 120; runs++) {
    let bytes: Uint8Array;
    let what: string;
    if (runs % 5 === 0) {
      bytes = new Uint8Array(Math.floor(random() * 300));
      for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(random() * 256);
      what = `random #${runs}`;
    } else {
      bytes = mutate(random, seeds[runs % seeds.length]);
      if (random() < 0.3) bytes = mutate(random, bytes);
      what = `mutation #${runs}`;
    }
    counts[await check(bytes, what)]++;
  }
  assert.ok(counts.rejected > 0 && counts.ok > 0, JSON.stringify(counts));
});

test("the same through a file, read with positioned reads", { timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), "protocall-fuzz-"));
  try {
    const random = rng(0xf11e);
    const deadline = performance.now() + 1500;
    let rejected = 0;
    for (let i = 0; performance.now() < deadline; i++) {
      const bytes = mutate(random, seeds[i % seeds.length]);
      const path = join(dir, `${i}.bin`);
      writeFileSync(path, bytes);
      try {
        await exercise(await openDescriptorSetFile(path));
      } catch (err) {
        if (!(err instanceof ProtocallError)) assert.fail(`file ${i}: threw ${String(err)}`);
        assert.ok(err.message.includes(path), `the error names the file: ${err.message}`);
        rejected++;
      } finally {
        rmSync(path, { force: true });
      }
    }
    assert.ok(rejected > 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
