import assert from "node:assert/strict";
import { closeSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { clone, create, equals, fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  type DescriptorProto,
  type FileDescriptorProto,
  FileDescriptorProtoSchema,
  FileDescriptorSetSchema,
} from "@bufbuild/protobuf/wkt";
import {
  type ByteWindow,
  fileBytes,
  fileBytesWithoutSourceInfo,
  fileWindow,
  memoryWindow,
  type ScannedFile,
  scanDetails,
  scanExtensions,
  scanTopLevel,
  WireError,
} from "../../../src/core/schema/wire-scan";
import { runBuf } from "../../support/buf";
import { acmeFiles, buildSet } from "./descriptor-set-fixtures";

/** What a scan should find in a file, computed from the decoded descriptor. */
function expected(file: FileDescriptorProto) {
  const prefix = file.package ? `${file.package}.` : "";
  const types: string[] = [];
  const extensions: { name: string; extendee: string; number: number }[] = [];
  const message = (m: DescriptorProto, scope: string) => {
    const name = scope + m.name;
    types.push(name);
    for (const n of m.nestedType) message(n, `${name}.`);
    for (const e of m.enumType) types.push(`${name}.${e.name}`);
    for (const x of m.extension) {
      extensions.push({ name: `${name}.${x.name}`, extendee: x.extendee.slice(1), number: x.number });
    }
  };
  for (const m of file.messageType) message(m, prefix);
  for (const e of file.enumType) types.push(prefix + e.name);
  for (const x of file.extension) {
    extensions.push({ name: prefix + x.name, extendee: x.extendee.slice(1), number: x.number });
  }
  return {
    name: file.name,
    package: file.package,
    dependencies: file.dependency,
    services: file.service.map((s) => ({ name: prefix + s.name, methods: s.method.map((m) => m.name) })),
    types: types.sort(),
    extensions: extensions.sort((a, b) => a.name.localeCompare(b.name)),
  };
}

function actual(f: ScannedFile) {
  return {
    name: f.name,
    package: f.package,
    dependencies: f.dependencies,
    services: f.services.map((s) => ({ name: s.name, methods: s.methods })),
    types: [...f.types].sort(),
    extensions: f.extensions
      .map((x) => ({ name: x.name, extendee: x.extendee, number: x.number }))
      .sort((a, b) => a.name.localeCompare(b.name)),
  };
}

function scanAll(w: ByteWindow, eager: boolean): ScannedFile[] {
  return scanTopLevel(w, eager).map((e) => {
    assert.equal(e.error, undefined);
    const f = e.file as ScannedFile;
    scanDetails(w, f);
    return f;
  });
}

let setBytes: Uint8Array;
let fixtureBytes: Uint8Array;
let decoded: FileDescriptorProto[];
let tmp: string;

before(async () => {
  setBytes = await buildSet(acmeFiles);
  // The shared schema fixtures: proto2, proto3, editions, custom options, comments.
  tmp = mkdtempSync(join(tmpdir(), "protocall-wire-"));
  const out = join(tmp, "fixtures.binpb");
  const r = await runBuf(["build", "test/fixtures/schema", "-o", out], { timeoutMs: 30_000 });
  assert.equal(r.code, 0, r.stderr);
  fixtureBytes = new Uint8Array(readFileSync(out));
  decoded = fromBinary(FileDescriptorSetSchema, setBytes).file;
});

after(() => rmSync(tmp, { recursive: true, force: true }));

describe("scanTopLevel", () => {
  test("finds every file's name, package, imports, services, types and extensions", () => {
    for (const bytes of [setBytes, fixtureBytes]) {
      const files = fromBinary(FileDescriptorSetSchema, bytes).file;
      for (const eager of [true, false]) {
        const scanned = scanAll(memoryWindow(bytes), eager);
        assert.equal(scanned.length, files.length);
        for (let i = 0; i < files.length; i++) assert.deepEqual(actual(scanned[i]), expected(files[i]));
      }
    }
  });

  test("leaves imports, messages, enums and extensions for scanDetails unless asked", () => {
    const [entry] = scanTopLevel(memoryWindow(setBytes), false).filter(
      (e) => e.file?.name === "acme/v1/common.proto",
    );
    const f = entry.file as ScannedFile;
    assert.equal(f.types.length, 0);
    assert.equal(f.dependencies.length, 0);
    assert.equal(f.hasDetails, false);
    scanDetails(memoryWindow(setBytes), f);
    assert.equal(f.hasDetails, true);
    assert.ok(f.types.includes("acme.v1.Money.Detail.Kind"));
    assert.deepEqual(f.dependencies, ["google/protobuf/timestamp.proto"]);
  });

  test("scanExtensions finds top-level and nested extensions without the other details", () => {
    for (const bytes of [setBytes, fixtureBytes]) {
      const files = fromBinary(FileDescriptorSetSchema, bytes).file;
      const w = memoryWindow(bytes);
      const scanned = scanTopLevel(w).map((e) => e.file as ScannedFile);
      for (let i = 0; i < files.length; i++) {
        const got = scanExtensions(w, scanned[i])
          .map((x) => ({ name: x.name, extendee: x.extendee, number: x.number }))
          .sort((a, b) => a.name.localeCompare(b.name));
        assert.deepEqual(got, expected(files[i]).extensions, files[i].name);
        assert.equal(scanned[i].hasDetails, false);
      }
    }
    const ext = scanTopLevel(memoryWindow(setBytes)).find((e) => e.file?.name === "acme/ext/v1/ext.proto");
    const names = scanExtensions(memoryWindow(setBytes), ext?.file as ScannedFile).map((x) => x.name);
    assert.deepEqual(names.sort(), ["acme.ext.v1.Box.weight", "acme.ext.v1.audit"]);
  });

  test("reads the same through a file window with positioned reads, even with a tiny chunk", () => {
    const path = join(tmp, "set.binpb");
    writeFileSync(path, fixtureBytes);
    const fd = openSync(path, "r");
    try {
      const reads: number[] = [];
      const w = fileWindow(
        fixtureBytes.length,
        (target, length, position) => {
          reads.push(length);
          return readSync(fd, target, 0, length, position);
        },
        7,
      );
      const viaFile = scanAll(w, false).map(actual);
      const inMemory = scanAll(memoryWindow(fixtureBytes), false).map(actual);
      assert.deepEqual(viaFile, inMemory);
      assert.ok(reads.length > 10, "the window was refilled");
      assert.ok(Math.max(...reads) < fixtureBytes.length, "never read the whole file at once");
    } finally {
      closeSync(fd);
    }
  });

  test("records source info ranges and slices them out before decoding", () => {
    const w = memoryWindow(fixtureBytes);
    const files = fromBinary(FileDescriptorSetSchema, fixtureBytes).file;
    const scanned = scanAll(w, false);
    for (let i = 0; i < files.length; i++) {
      const f = scanned[i];
      assert.equal(f.sourceInfo.length, files[i].sourceCodeInfo ? 2 : 0);
      const stripped = fromBinary(FileDescriptorProtoSchema, fileBytesWithoutSourceInfo(w, f));
      const want = clone(FileDescriptorProtoSchema, files[i]);
      want.sourceCodeInfo = undefined;
      assert.ok(equals(FileDescriptorProtoSchema, stripped, want), files[i].name);
      const full = fromBinary(FileDescriptorProtoSchema, fileBytes(w, f));
      assert.ok(equals(FileDescriptorProtoSchema, full, files[i]), files[i].name);
    }
  });

  test("names symbols right when the package comes after them", () => {
    const file = decoded.find((f) => f.name === "acme/v1/shop.proto") as FileDescriptorProto;
    const withoutPackage = clone(FileDescriptorProtoSchema, file);
    withoutPackage.package = "";
    // Concatenated messages merge: this encodes the package last, after services and messages.
    const bytes = new Uint8Array([
      ...toBinary(FileDescriptorProtoSchema, withoutPackage),
      ...toBinary(FileDescriptorProtoSchema, create(FileDescriptorProtoSchema, { package: file.package })),
    ]);
    const set = toBinary(FileDescriptorSetSchema, create(FileDescriptorSetSchema, { file: [] }));
    const framed = new Uint8Array([...set, 0x0a, ...varint(bytes.length), ...bytes]);
    for (const eager of [true, false]) {
      const [f] = scanAll(memoryWindow(framed), eager);
      assert.deepEqual(actual(f), expected(file));
    }
  });

  test("tells a plugin request's fields apart: file names in field 1 do not scan as files", () => {
    const entries = scanTopLevel(memoryWindow(new Uint8Array([0x0a, 3, 0x61, 0x62, 0x63])));
    assert.equal(entries.length, 1);
    assert.ok(entries[0].error instanceof WireError);
  });
});

describe("malformed input", () => {
  const cases: [string, number[], RegExp][] = [
    ["a truncated varint", [0x0a, 0x80], /truncated/],
    ["a length past the end", [0x0a, 0x05, 0x01], /runs past the end/],
    ["wire type 7", [0x0f], /invalid wire type 7/],
    ["a stray end-group", [0x0c], /invalid wire type 4/],
    ["field number 0", [0x02, 0x00], /number 0/],
    ["a varint of 11 bytes", [0x08, ...new Array(10).fill(0xff), 0x01], /longer than 10 bytes/],
    ["an unterminated group", [0x0b, 0x08, 0x01], /truncated/],
  ];
  for (const [what, bytes, message] of cases) {
    test(`rejects ${what} with a WireError`, () => {
      assert.throws(
        () => scanTopLevel(memoryWindow(new Uint8Array(bytes))),
        (err: unknown) => {
          assert.ok(err instanceof WireError);
          assert.match(err.message, message);
          return true;
        },
      );
    });
  }

  test("a malformed file is recorded on its entry, with the offset", () => {
    // File #1 claims a name field longer than itself.
    const entries = scanTopLevel(memoryWindow(new Uint8Array([0x0a, 0x03, 0x0a, 0x09, 0x61])));
    assert.ok(entries[0].error instanceof WireError);
    assert.match(entries[0].error.message, /runs past the end of its file/);
    assert.equal(entries[0].error.offset, 3);
  });

  test("a file without a name is rejected", () => {
    const entries = scanTopLevel(memoryWindow(new Uint8Array([0x0a, 0x03, 0x12, 0x01, 0x61])));
    assert.match(entries[0].error?.message ?? "", /no name/);
  });
});

function varint(n: number): number[] {
  const out: number[] = [];
  while (n >= 0x80) {
    out.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return out;
}
