// Small descriptor sets built with the real buf binary, for the descriptor-set tests.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { type FileDescriptorProto, FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { runBuf } from "../../support/buf";

/** A module of three packages: services, nested types, enums, extensions, comments, WKT imports. */
export const acmeFiles: Record<string, string> = {
  "acme/v1/common.proto": `syntax = "proto3";
package acme.v1;

import "google/protobuf/timestamp.proto";

// A money amount.
message Money {
  string currency = 1;
  int64 units = 2;
  // What kind of money.
  message Detail {
    enum Kind {
      KIND_UNSPECIFIED = 0;
      CASH = 1;
    }
    Kind kind = 1;
  }
  Detail detail = 3;
}

enum Level {
  LEVEL_UNSPECIFIED = 0;
  HIGH = 1;
}

message Stamp {
  google.protobuf.Timestamp at = 1;
}
`,
  "acme/v1/shop.proto": `syntax = "proto3";
package acme.v1;

import "acme/v1/common.proto";
import "google/protobuf/empty.proto";

// The shop.
service ShopService {
  // Buys something.
  rpc Buy(BuyRequest) returns (BuyResponse);
  rpc Ping(google.protobuf.Empty) returns (google.protobuf.Empty);
}

message BuyRequest {
  Money price = 1;
  Level level = 2;
  Stamp stamp = 3;
}

message BuyResponse {
  string id = 1;
}
`,
  "acme/ext/v1/ext.proto": `syntax = "proto2";
package acme.ext.v1;

import "google/protobuf/descriptor.proto";

extend google.protobuf.MethodOptions {
  optional string audit = 50001;
}

message Box {
  optional string label = 1;
  extensions 100 to 200;
  extend Box {
    optional int32 weight = 100;
  }
}
`,
  "other/v2/other.proto": `syntax = "proto3";
package other.v2;

service OtherService {
  rpc Get(GetRequest) returns (GetResponse);
}

message GetRequest {
  string key = 1;
}

message GetResponse {
  bytes value = 1;
}
`,
};

/** Writes the files (and a buf.yaml) to a new temp directory; returns it. */
export function writeModule(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "protocall-set-"));
  writeFileSync(join(dir, "buf.yaml"), "version: v2\n");
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

/**
 * Builds the files with `buf build <dir> -o <out>` (plus `args`) and returns the output's bytes.
 * `out` picks the format by extension (set.binpb, set.json).
 */
export async function buildSet(files: Record<string, string>, args: string[] = [], out = "set.binpb") {
  const dir = writeModule(files);
  try {
    const path = join(dir, out);
    const result = await runBuf(["build", dir, "-o", path, ...args], { timeoutMs: 30_000 });
    if (result.code !== 0) throw new Error(`buf build failed: ${result.stderr}`);
    return new Uint8Array(readFileSync(path));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Re-encodes a binary set with its files chosen and ordered by `pick`. */
export function reorderSet(
  bytes: Uint8Array,
  pick: (files: FileDescriptorProto[]) => FileDescriptorProto[],
): Uint8Array {
  const set = fromBinary(FileDescriptorSetSchema, bytes);
  set.file = pick(set.file);
  return toBinary(FileDescriptorSetSchema, set);
}
