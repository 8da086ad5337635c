import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { after, before, describe, test } from "node:test";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  CodeGeneratorRequestSchema,
  FileDescriptorProtoSchema,
  FileDescriptorSetSchema,
} from "@bufbuild/protobuf/wkt";
import { ProtocallError } from "../../../src/core/errors";
import {
  DescriptorSetIndex,
  detectSchemaFormat,
  fileError,
  readSchemaInput,
} from "../../../src/core/schema/descriptor-set";
import { acmeFiles, buildSet } from "./descriptor-set-fixtures";

let image: Uint8Array;
let fds: Uint8Array;
let json: Uint8Array;
let tmp: string;

before(async () => {
  [image, fds, json] = await Promise.all([
    buildSet(acmeFiles),
    buildSet(acmeFiles, ["--as-file-descriptor-set"]),
    buildSet(acmeFiles, [], "set.json"),
  ]);
  tmp = mkdtempSync(join(tmpdir(), "protocall-ds-"));
});

after(() => rmSync(tmp, { recursive: true, force: true }));

function rejects(fn: () => unknown, message: RegExp) {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof ProtocallError, `expected a ProtocallError, got ${String(err)}`);
    assert.match(err.message, message);
    return true;
  });
}

describe("detectSchemaFormat", () => {
  test("a binary descriptor set, with or without buf's image fields", () => {
    assert.equal(detectSchemaFormat(fds), "binary-set");
    assert.equal(detectSchemaFormat(image), "binary-set");
    assert.notEqual(image.length, fds.length, "the image carries buf's extra per-file fields");
  });

  test("the JSON form, leading whitespace allowed", () => {
    assert.equal(detectSchemaFormat(json), "json-set");
    assert.equal(detectSchemaFormat(new TextEncoder().encode('\n  {"file": []}')), "json-set");
  });

  test("a plugin's CodeGeneratorRequest", () => {
    const set = fromBinary(FileDescriptorSetSchema, fds);
    const request = create(CodeGeneratorRequestSchema, {
      fileToGenerate: ["acme/v1/shop.proto"],
      parameter: "x=1",
      protoFile: set.file,
    });
    assert.equal(detectSchemaFormat(toBinary(CodeGeneratorRequestSchema, request)), "plugin-request");
  });

  test("a binary set that happens to start like JSON (newline, then `{`) is still binary", () => {
    // The first file is exactly 123 bytes long: the set starts with 0x0A 0x7B, "\n{".
    const file = create(FileDescriptorProtoSchema, { name: `${"x".repeat(112)}.proto`, package: "p" });
    assert.equal(toBinary(FileDescriptorProtoSchema, file).length, 123);
    const set = toBinary(FileDescriptorSetSchema, create(FileDescriptorSetSchema, { file: [file] }));
    assert.deepEqual([...set.subarray(0, 2)], [0x0a, 0x7b]);
    assert.equal(detectSchemaFormat(set), "binary-set");
    const path = join(tmp, "json-like.binpb");
    writeFileSync(path, set);
    assert.deepEqual(DescriptorSetIndex.fromFile(path).listFiles(), [file.name]);
  });

  test("rejects an empty input", () => {
    rejects(() => detectSchemaFormat(new Uint8Array(0)), /is empty.*buf build -o/);
  });

  test("rejects random bytes, saying what was expected", () => {
    rejects(
      () => detectSchemaFormat(new Uint8Array([0xff, 0xff, 0xff, 0x07, 1, 2, 3])),
      /not a descriptor set, image or plugin request: .* at byte \d+\. Expected a descriptor set/,
    );
  });

  test("rejects a truncated set", () => {
    rejects(() => detectSchemaFormat(fds.subarray(0, Math.floor(fds.length / 2))), /truncated/);
  });

  test("rejects JSON that is not a descriptor set", () => {
    const enc = (s: string) => new TextEncoder().encode(s);
    rejects(() => detectSchemaFormat(enc('{"files": []}')), /JSON but not a descriptor set.*"file" array/);
    rejects(() => detectSchemaFormat(enc("[1, 2]")), /not a descriptor set/);
    rejects(() => detectSchemaFormat(enc('{"file": [')), /not valid JSON/);
    rejects(() => detectSchemaFormat(enc('{"file": [{"name": 7}]}')), /JSON but not a valid descriptor set/);
  });

  test("recognizes a .proto source file and says how to use it", () => {
    const text = new TextEncoder().encode('syntax = "proto3";\npackage a;\nmessage M {}\n');
    rejects(() => detectSchemaFormat(text), /looks like a \.proto source file/);
  });

  test("recognizes a single FileDescriptorProto", () => {
    const file = fromBinary(FileDescriptorSetSchema, fds).file[0];
    rejects(
      () => detectSchemaFormat(toBinary(FileDescriptorProtoSchema, file)),
      /looks like a single FileDescriptorProto/,
    );
  });
});

describe("readSchemaInput", () => {
  test("reads all of stdin for -", async () => {
    const half = Math.floor(fds.length / 2);
    const stdin = Readable.from([Buffer.from(fds.subarray(0, half)), Buffer.from(fds.subarray(half))]);
    assert.deepEqual(new Uint8Array(await readSchemaInput("-", stdin)), fds);
  });

  test("an empty stdin is an error", async () => {
    await assert.rejects(readSchemaInput("-", Readable.from([])), /schema on stdin is empty/);
  });

  test("reads a file", async () => {
    const path = join(tmp, "read.binpb");
    writeFileSync(path, fds);
    assert.deepEqual(new Uint8Array(await readSchemaInput(path, Readable.from([]))), fds);
  });

  test("names the file and the problem: missing, directory, empty, not a directory", async () => {
    const empty = join(tmp, "empty.binpb");
    writeFileSync(empty, "");
    const dir = join(tmp, "a-dir");
    mkdirSync(dir, { recursive: true });
    const none = Readable.from([]);
    await assert.rejects(readSchemaInput(join(tmp, "nope.binpb"), none), /nope\.binpb does not exist/);
    await assert.rejects(readSchemaInput(dir, none), /a-dir is a directory/);
    await assert.rejects(readSchemaInput(empty, none), /empty\.binpb is empty/);
    await assert.rejects(readSchemaInput(join(empty, "x"), none), /empty\.binpb\/x cannot be read/);
  });
});

describe("fileError", () => {
  test("says what went wrong with a file, by error code", () => {
    const err = (code: string) => Object.assign(new Error(`${code}: failed`), { code });
    assert.match(
      fileError("a.pb", err("EACCES")).message,
      /^schema file a\.pb cannot be read: permission denied$/,
    );
    assert.match(fileError("a.pb", err("EPERM")).message, /permission denied/);
    assert.match(fileError("a.pb", err("ENOENT")).message, /a\.pb does not exist/);
    assert.match(fileError("d", err("EISDIR")).message, /d is a directory; pass a descriptor-set file/);
    assert.match(fileError("a.pb", err("EIO")).message, /a\.pb cannot be read: EIO: failed/);
    assert.ok(fileError("a.pb", err("EIO")) instanceof ProtocallError);
  });
});

describe("DescriptorSetIndex", () => {
  test("lists files in input order with their metadata", () => {
    const index = DescriptorSetIndex.fromBytes(fds, "test set");
    const names = fromBinary(FileDescriptorSetSchema, fds).file.map((f) => f.name);
    assert.deepEqual(index.listFiles(), names);
    const shop = index.file("acme/v1/shop.proto");
    assert.deepEqual(shop?.dependencies, ["acme/v1/common.proto", "google/protobuf/empty.proto"]);
    assert.deepEqual(shop?.services, [{ name: "acme.v1.ShopService", methods: ["Buy", "Ping"] }]);
    assert.deepEqual(shop?.types, ["acme.v1.BuyRequest", "acme.v1.BuyResponse"]);
    assert.equal(shop?.hasSourceInfo, true);
    assert.equal(index.file("missing.proto"), undefined);
  });

  test("finds the file of services, methods, nested types, enums and extensions", () => {
    const index = DescriptorSetIndex.fromBytes(image, "test set");
    assert.equal(index.findFileBySymbol("acme.v1.ShopService"), "acme/v1/shop.proto");
    assert.equal(index.findFileBySymbol("acme.v1.ShopService.Buy"), "acme/v1/shop.proto");
    assert.equal(index.findFileBySymbol(".acme.v1.Money.Detail.Kind"), "acme/v1/common.proto");
    assert.equal(index.findFileBySymbol("acme.v1.Level"), "acme/v1/common.proto");
    assert.equal(index.findFileBySymbol("acme.ext.v1.Box.weight"), "acme/ext/v1/ext.proto");
    assert.equal(index.findFileBySymbol("google.protobuf.Timestamp"), "google/protobuf/timestamp.proto");
    assert.equal(index.findFileBySymbol("acme.v1.ShopService.Sell"), undefined);
    assert.equal(index.findFileBySymbol("acme.v1.Nope"), undefined);
    assert.equal(index.findFileBySymbol("acme"), undefined);
    assert.deepEqual(index.findExtensionFile("google.protobuf.MethodOptions", 50001), {
      file: "acme/ext/v1/ext.proto",
      name: "acme.ext.v1.audit",
    });
    assert.deepEqual(
      index.listExtensions("acme.ext.v1.Box").map((x) => x.name),
      ["acme.ext.v1.Box.weight"],
    );
    assert.equal(index.findExtensionFile("google.protobuf.MethodOptions", 50002), undefined);
  });

  test("the first declaration wins: of a file name, and of a symbol declared twice", () => {
    const file = (name: string, pkg: string, message: string) =>
      create(FileDescriptorProtoSchema, { name, package: pkg, messageType: [{ name: message }] });
    const set = create(FileDescriptorSetSchema, {
      file: [file("z.proto", "dup", "M"), file("a.proto", "dup", "M"), file("z.proto", "other", "N")],
    });
    const index = DescriptorSetIndex.fromBytes(toBinary(FileDescriptorSetSchema, set), "dups");
    assert.deepEqual(index.listFiles(), ["z.proto", "a.proto"]);
    assert.equal(index.file("z.proto")?.package, "dup");
    assert.equal(index.findFileBySymbol("dup.M"), "z.proto");
    assert.equal(index.findFileBySymbol("other.N"), undefined);
    // Scanned in the other order, the answer stays the first in the input.
    const again = DescriptorSetIndex.fromBytes(toBinary(FileDescriptorSetSchema, set), "dups");
    assert.deepEqual(again.file("a.proto")?.types, ["dup.M"]);
    assert.equal(again.findFileBySymbol("dup.M"), "z.proto");
  });

  test("the closure of a file holds its transitive imports that the set contains", () => {
    const index = DescriptorSetIndex.fromBytes(fds, "test set");
    assert.deepEqual(index.closure("acme/v1/shop.proto").sort(), [
      "acme/v1/common.proto",
      "acme/v1/shop.proto",
      "google/protobuf/empty.proto",
      "google/protobuf/timestamp.proto",
    ]);
  });

  test("decodes one file, with or without source info", () => {
    const index = DescriptorSetIndex.fromBytes(fds, "test set");
    const bare = index.decode("acme/v1/shop.proto");
    assert.equal(bare.sourceCodeInfo, undefined);
    assert.equal(bare.service[0].method[0].inputType, ".acme.v1.BuyRequest");
    const full = index.decode("acme/v1/shop.proto", true);
    assert.ok((full.sourceCodeInfo?.location.length ?? 0) > 0);
    assert.throws(() => index.decode("nope.proto"), /does not contain file "nope\.proto"/);
  });

  test("a plugin request: proto_file, file_to_generate, parameter, source_file_descriptors", () => {
    const set = fromBinary(FileDescriptorSetSchema, fds);
    const onlyInSource = create(FileDescriptorProtoSchema, { name: "extra/x.proto", package: "extra" });
    const request = create(CodeGeneratorRequestSchema, {
      fileToGenerate: ["acme/v1/shop.proto", "other/v2/other.proto"],
      parameter: "paths=source_relative",
      protoFile: set.file,
      sourceFileDescriptors: [set.file.find((f) => f.name === "acme/v1/shop.proto")!, onlyInSource],
    });
    const index = DescriptorSetIndex.fromBytes(toBinary(CodeGeneratorRequestSchema, request), "request");
    assert.equal(index.format, "plugin-request");
    assert.deepEqual(index.filesToGenerate, ["acme/v1/shop.proto", "other/v2/other.proto"]);
    assert.equal(index.parameter, "paths=source_relative");
    assert.deepEqual(index.listFiles(), [...set.file.map((f) => f.name), "extra/x.proto"]);
    assert.deepEqual(index.listServices(), ["acme.v1.ShopService", "other.v2.OtherService"]);
  });

  test("reads a file with positioned reads and closes it", () => {
    const path = join(tmp, "index.binpb");
    writeFileSync(path, image);
    const index = DescriptorSetIndex.fromFile(path);
    assert.equal(index.label, `descriptor set ${path}`);
    assert.deepEqual(index.listServices(), ["acme.v1.ShopService", "other.v2.OtherService"]);
    index.close();
    index.close();
  });

  test("opening a bad file fails with one error naming it", () => {
    const bad = join(tmp, "bad.pb");
    writeFileSync(bad, new Uint8Array([0x0a, 0x40, 1, 2, 3]));
    rejects(() => DescriptorSetIndex.fromFile(bad), /descriptor set .*bad\.pb is not a descriptor set/);
    const empty = join(tmp, "empty.pb");
    writeFileSync(empty, "");
    rejects(() => DescriptorSetIndex.fromFile(empty), /empty\.pb is empty/);
    rejects(() => DescriptorSetIndex.fromFile(tmp), /is a directory/);
    rejects(() => DescriptorSetIndex.fromFile(join(tmp, "none.pb")), /none\.pb does not exist/);
    const jsonPath = join(tmp, "set.json");
    writeFileSync(jsonPath, json);
    assert.equal(DescriptorSetIndex.fromFile(jsonPath).format, "json-set");
  });
});
