// Builds with a real protoc (Debian's protobuf-compiler, installed by .ci/run) configured instead of
// buf: -I include paths, --include_imports, --include_source_info, compiler errors as diagnostics
// that name the files where they are, and the build cache.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, test } from "node:test";
import { fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import {
  buildWorkspace,
  CompilerError,
  type CompilerRunner,
  runCompiler,
} from "../../../src/core/schema/compiler";
import { openDescriptorSetBytes } from "../../../src/core/schema/descriptor-set-source";
import { renderDocs } from "../../../src/core/schema/docs";
import { lookupInSource } from "../../../src/core/schema/source-lookup";

/** The protoc on PATH; the test fails (it is never skipped) when there is none. */
function findProtoc(): string {
  try {
    return execFileSync("sh", ["-c", "command -v protoc"], { encoding: "utf8" }).trim();
  } catch {
    return "";
  }
}
const protoc = findProtoc();

function requireProtoc(): string {
  assert.ok(protoc, "protoc is not on PATH: install protobuf-compiler, as .ci/run does");
  return protoc;
}

const temp = mkdtempSync(join(tmpdir(), "protocall-protoc-real-"));
after(() => rmSync(temp, { recursive: true, force: true }));

function write(files: Record<string, string>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(temp, path)), { recursive: true });
    writeFileSync(join(temp, path), content);
  }
}

write({
  "ws/proto/acme/v1/shop.proto": `syntax = "proto3";
package acme.v1;

import "google/protobuf/timestamp.proto";
import "vendor/money.proto";

// The shop.
service ShopService {
  // Buys something.
  rpc Buy(BuyRequest) returns (BuyResponse);
}

message BuyRequest {
  // What it costs.
  vendor.Money price = 1;
  google.protobuf.Timestamp at = 2;
}

message BuyResponse { string id = 1; }
`,
  "ws/third_party/vendor/money.proto": `syntax = "proto2";
package vendor;

// An amount of money.
message Money {
  optional string currency = 1 [default = "EUR"];
  optional int64 units = 2;
}
`,
  "bad/proto/acme/v1/broken.proto": `syntax = "proto3";
package acme.v1;

import "vendor/gone.proto";
import "vendor/bad.proto";

message Broken {
  Nope nope = 1;
}
`,
  "bad/third_party/vendor/bad.proto": `syntax = "proto3";
package vendor;
message Bad { int32 x = 1 }
`,
});

function counting(): { runner: CompilerRunner; runs: () => number } {
  let runs = 0;
  return {
    runner: (file, args, options) => {
      runs++;
      return runCompiler(file, args, options);
    },
    runs: () => runs,
  };
}

test("protoc builds with include paths, imports and source info, and the set loads", async () => {
  const { runner, runs } = counting();
  const options = {
    cwd: temp,
    protocPath: requireProtoc(),
    includePaths: [".", "../third_party"],
    cacheDir: join(temp, "cache"),
    runner,
  };
  const { bytes, fromCache } = await buildWorkspace("ws/proto", options);
  assert.equal(fromCache, false);
  const set = fromBinary(FileDescriptorSetSchema, bytes);
  assert.deepEqual(set.file.map((f) => f.name).sort(), [
    "acme/v1/shop.proto",
    "google/protobuf/timestamp.proto",
    "vendor/money.proto",
  ]);
  assert.ok(
    set.file.every((f) => f.sourceCodeInfo !== undefined),
    "source info on every file",
  );

  const source = openDescriptorSetBytes(bytes, "protoc build");
  try {
    assert.deepEqual(await source.listServices(), ["acme.v1.ShopService"]);
    const price = await lookupInSource(source, "acme.v1.BuyRequest.price");
    assert.ok(price);
    assert.deepEqual(renderDocs(price, { registry: price.registry }).comments, ["What it costs."]);
    const money = await source.findType("vendor.Money");
    assert.ok(money?.kind === "message");
    assert.equal(
      money.field.currency.fieldKind === "scalar" && money.field.currency.getDefaultValue(),
      "EUR",
    );
  } finally {
    await source.close();
  }

  // Unchanged: served from the cache; without source info: a different build.
  assert.equal((await buildWorkspace("ws/proto", options)).fromCache, true);
  const bare = await buildWorkspace("ws/proto", { ...options, excludeSourceInfo: true });
  assert.equal(bare.fromCache, false);
  assert.ok(
    fromBinary(FileDescriptorSetSchema, bare.bytes).file.every((f) => f.sourceCodeInfo === undefined),
  );
  assert.equal(runs(), 2);
});

test("protoc errors are diagnostics naming each file where it is", async () => {
  await assert.rejects(
    buildWorkspace("bad/proto", {
      cwd: temp,
      protocPath: requireProtoc(),
      includePaths: [".", "../third_party"],
      cacheDir: false,
    }),
    (err: unknown) => {
      assert.ok(err instanceof CompilerError, String(err));
      const broken = err.diagnostics.filter((d) => d.file === join("bad/proto/acme/v1/broken.proto"));
      assert.ok(broken.length >= 1, JSON.stringify(err.diagnostics));
      assert.ok(
        broken.every((d) => d.line > 0 && d.column > 0),
        JSON.stringify(broken),
      );
      assert.ok(
        err.diagnostics.some((d) => /vendor\/gone\.proto/.test(`${d.file} ${d.message}`)),
        JSON.stringify(err.diagnostics),
      );
      // An error in a file of the other include path names that file, not one under bad/proto.
      const bad = err.diagnostics.find((d) => d.file.endsWith("bad.proto"));
      assert.deepEqual(bad && [bad.file, bad.line], [join("bad/third_party/vendor/bad.proto"), 3]);
      assert.match(err.message, /^compiling bad\/proto failed with \d+ errors?:\n/);
      return true;
    },
  );
});
