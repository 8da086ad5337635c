// Telling JSON from binary by content: a binary set may start with the same bytes as JSON text.
// Field 1 of a FileDescriptorSet (or of a CodeGeneratorRequest) is tagged 0x0a, a newline; when the
// first entry is exactly 123 bytes long its length byte is 0x7b, "{". Such inputs are binary.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { create, toBinary, toJsonString } from "@bufbuild/protobuf";
import {
  CodeGeneratorRequestSchema,
  type FileDescriptorProto,
  FileDescriptorProtoSchema,
  FileDescriptorSetSchema,
} from "@bufbuild/protobuf/wkt";
import { detectSchemaFormat } from "../../../src/core/schema/descriptor-set";
import {
  openDescriptorSetBytes,
  openDescriptorSetFile,
} from "../../../src/core/schema/descriptor-set-source";

const temp = mkdtempSync(join(tmpdir(), "protocall-format-"));
after(() => rmSync(temp, { recursive: true, force: true }));

/** A small file with a service, its name padded so that the file encodes to exactly `size` bytes. */
function fileOfSize(size: number): FileDescriptorProto {
  for (let n = 1; n < size; n++) {
    const file = create(FileDescriptorProtoSchema, {
      name: `${"a".repeat(n)}.proto`,
      package: "p",
      syntax: "proto3",
      messageType: [{ name: "M" }],
      service: [{ name: "S", method: [{ name: "Get", inputType: ".p.M", outputType: ".p.M" }] }],
    });
    if (toBinary(FileDescriptorProtoSchema, file).length === size) return file;
  }
  throw new Error(`no file of ${size} bytes`);
}

test('a binary set whose first file is 123 bytes ("\\n{") is binary', async () => {
  const bytes = toBinary(
    FileDescriptorSetSchema,
    create(FileDescriptorSetSchema, { file: [fileOfSize(123)] }),
  );
  assert.deepEqual([...bytes.subarray(0, 2)], [0x0a, 0x7b], "starts like JSON text");
  assert.equal(detectSchemaFormat(bytes), "binary-set");
  assert.deepEqual(await openDescriptorSetBytes(bytes, "set").listServices(), ["p.S"]);
  const path = join(temp, "small.binpb");
  writeFileSync(path, bytes);
  const source = await openDescriptorSetFile(path);
  try {
    assert.deepEqual(await source.listServices(), ["p.S"]);
    assert.equal((await source.findType("p.S"))?.kind, "service");
  } finally {
    await source.close();
  }
});

test("a plugin request whose first file to generate has a 123-character name is a plugin request", async () => {
  const file = fileOfSize(200);
  const name = `${"d/".repeat(58)}x.proto`;
  assert.equal(name.length, 123);
  file.name = name;
  const bytes = toBinary(
    CodeGeneratorRequestSchema,
    create(CodeGeneratorRequestSchema, { fileToGenerate: [name], protoFile: [file] }),
  );
  assert.deepEqual([...bytes.subarray(0, 2)], [0x0a, 0x7b]);
  assert.equal(detectSchemaFormat(bytes), "plugin-request");
  assert.deepEqual(await openDescriptorSetBytes(bytes, "request").listServices(), ["p.S"]);
});

test("JSON text after whitespace is still JSON, and broken JSON still says so", () => {
  const set = create(FileDescriptorSetSchema, { file: [fileOfSize(123)] });
  const json = new TextEncoder().encode(`\n${toJsonString(FileDescriptorSetSchema, set)}`);
  assert.equal(detectSchemaFormat(json), "json-set");
  assert.throws(
    () => detectSchemaFormat(new TextEncoder().encode('\n{"file": [')),
    /starts like JSON but is not valid JSON/,
  );
});
