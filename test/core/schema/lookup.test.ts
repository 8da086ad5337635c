import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { before, describe, test } from "node:test";
import { clone, createFileRegistry, type FileRegistry } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { fullNameOf, lookup, resolveName } from "../../../src/core/schema/lookup";
import {
  buildSchemaFixtures,
  schemaFixturesDir,
  schemaFixturesRegistry,
} from "../../support/schema-fixtures";

let registry: FileRegistry;
before(async () => {
  registry = await schemaFixturesRegistry();
});

/** Zero-based line and column of the first occurrence of `needle` in a fixture file. */
function positionOf(file: string, needle: string): { line: number; column: number } {
  const lines = readFileSync(join(schemaFixturesDir, file), "utf8").split("\n");
  for (let line = 0; line < lines.length; line++) {
    const column = lines[line].indexOf(needle);
    if (column >= 0) return { line, column };
  }
  throw new Error(`${needle} not in ${file}`);
}

function names(descs: { kind: string }[]): string[] {
  return descs.map((d) => fullNameOf(d as never));
}

describe("lookup", () => {
  test("finds a service with its file, span and comments of every kind", () => {
    const r = lookup(registry, "fixtures.v1.Greeter");
    assert.ok(r);
    assert.equal(r.kind, "service");
    assert.equal(r.file.proto.name, "fixtures/v1/greeter.proto");
    assert.deepEqual(r.parents, []);
    const at = positionOf("fixtures/v1/greeter.proto", "service Greeter {");
    assert.equal(r.location?.startLine, at.line);
    assert.equal(r.location?.startColumn, at.column);
    assert.ok(r.location!.endLine > at.line, "a multi-line declaration has an end line");
    assert.equal(
      r.comments?.leading,
      " Greeter greets people.\n It has one method of every streaming kind.\n",
    );
    assert.deepEqual(r.comments?.leadingDetached, [
      " A detached comment about the service, separated by a blank line.\n",
    ]);
  });

  test("finds a method with its service as parent and a trailing comment", () => {
    const r = lookup(registry, "fixtures.v1.Greeter.Greet");
    assert.ok(r);
    assert.equal(r.kind, "method");
    assert.deepEqual(names(r.parents), ["fixtures.v1.Greeter"]);
    assert.equal(r.comments?.leading, " Greet says hello once.\n");
    assert.equal(r.comments?.trailing, " Greet trailing comment.");
    assert.deepEqual(r.comments?.leadingDetached, []);
    assert.deepEqual(lookup(registry, "fixtures.v1.Greeter.ListGreetings")?.comments?.leadingDetached, [
      " Detached comment between two methods.\n",
    ]);
    const at = positionOf("fixtures/v1/greeter.proto", "rpc Greet(");
    assert.deepEqual([r.location?.startLine, r.location?.startColumn], [at.line, at.column]);
  });

  test("finds fields, nested messages, nested enums and their values", () => {
    const field = lookup(registry, "fixtures.v1.GreetRequest.name");
    assert.equal(field?.kind, "field");
    assert.equal(field?.comments?.leading, " The name of the person.\n");
    assert.equal(field?.comments?.trailing, " Trailing comment on name.");
    const at = positionOf("fixtures/v1/greeter.proto", "string name = 1;");
    // A single-line span has three numbers; the end line defaults to the start line.
    assert.deepEqual(field?.location, {
      startLine: at.line,
      startColumn: at.column,
      endLine: at.line,
      endColumn: at.column + "string name = 1;".length,
    });

    const nested = lookup(registry, "fixtures.v1.GreetRequest.Postal.country");
    assert.equal(nested?.kind, "field");
    assert.deepEqual(names(nested!.parents), ["fixtures.v1.GreetRequest", "fixtures.v1.GreetRequest.Postal"]);

    const value = lookup(registry, "fixtures.v1.GreetRequest.Postal.Country.COUNTRY_NL");
    assert.equal(value?.kind, "enum_value");
    assert.deepEqual(names(value!.parents), [
      "fixtures.v1.GreetRequest",
      "fixtures.v1.GreetRequest.Postal",
      "fixtures.v1.GreetRequest.Postal.Country",
    ]);
  });

  test("finds enum values by their protobuf scope as well as under their enum", () => {
    const full = resolveName(registry, "fixtures.v1.Language.LANGUAGE_EN");
    assert.equal(full?.kind, "enum_value");
    assert.equal(resolveName(registry, "fixtures.v1.LANGUAGE_EN"), full);
    assert.equal(resolveName(registry, ".fixtures.v1.LANGUAGE_EN"), full);
    // Scoped in a message: values of Postal.Country are siblings of Country inside Postal.
    assert.equal(
      resolveName(registry, "fixtures.v1.GreetRequest.Postal.COUNTRY_FR"),
      resolveName(registry, "fixtures.v1.GreetRequest.Postal.Country.COUNTRY_FR"),
    );
    const r = lookup(registry, "fixtures.v1.LANGUAGE_EN");
    assert.equal(r?.fullName, "fixtures.v1.Language.LANGUAGE_EN");
    assert.equal(r?.comments?.leading, " English.\n");
    assert.equal(r?.comments?.trailing, " Trailing comment on a value.");
    assert.deepEqual(lookup(registry, "fixtures.v1.LANGUAGE_EN")?.comments?.leadingDetached, [
      " Detached comment inside an enum.\n",
    ]);
  });

  test("finds oneofs, extensions and top-level extensions", () => {
    const oneof = lookup(registry, "fixtures.v1.GreetRequest.address");
    assert.equal(oneof?.kind, "oneof");
    assert.equal(oneof?.comments?.leading, " Exactly one way to address the person.\n");
    assert.deepEqual(oneof?.comments?.leadingDetached, [" Detached comment before a oneof.\n"]);

    const top = lookup(registry, "fixtures.proto2.priority");
    assert.equal(top?.kind, "extension");
    assert.deepEqual(top?.parents, []);
    assert.equal(top?.comments?.leading, " How urgent the record is.\n");
    assert.equal(top?.file.proto.name, "fixtures/proto2/legacy.proto");

    const nested = lookup(registry, "fixtures.proto2.Legacy.nested_ext");
    assert.equal(nested?.kind, "extension");
    assert.deepEqual(names(nested!.parents), ["fixtures.proto2.Legacy"]);
    assert.equal(nested?.comments?.leading, " An extension declared inside a message scope.\n");
  });

  test("finds messages, enums and proto2 groups; message trailing comments", () => {
    assert.equal(lookup(registry, "fixtures.proto2.Legacy.Extra")?.kind, "message");
    assert.equal(lookup(registry, "fixtures.proto2.Legacy.Inner.Kind")?.kind, "enum");
    assert.equal(lookup(registry, "fixtures.editions.Settings.child")?.kind, "field");
    assert.equal(
      lookup(registry, "fixtures.v1.Empty")?.comments?.trailing,
      " A trailing comment on a message.",
    );
    assert.equal(
      lookup(registry, "google.protobuf.Timestamp")?.file.proto.name,
      "google/protobuf/timestamp.proto",
    );
  });

  test("returns undefined for names that do not exist", () => {
    for (const name of [
      "",
      ".",
      "fixtures",
      "fixtures.v1.Nope",
      "fixtures.v1.Greeter.Nope",
      "fixtures.v1.NOPE",
      "x.y.z",
    ]) {
      assert.equal(lookup(registry, name), undefined, name);
    }
    assert.equal(lookup(registry, "fixtures.proto2.priority.x"), undefined);
  });

  test("has no location or comments when the descriptors carry no source info", async () => {
    const { set } = await buildSchemaFixtures();
    const stripped = clone(FileDescriptorSetSchema, set);
    for (const file of stripped.file) file.sourceCodeInfo = undefined;
    const r = lookup(createFileRegistry(stripped), "fixtures.v1.Greeter.Greet");
    assert.equal(r?.kind, "method");
    assert.equal(r?.location, undefined);
    assert.equal(r?.comments, undefined);
  });
});
