import assert from "node:assert/strict";
import { before, describe, test } from "node:test";
import { createRegistry, type DescMessage, type DescService, type FileRegistry } from "@bufbuild/protobuf";
import { lookup } from "../../../src/core/schema/lookup";
import {
  decodeOptions,
  decodeOptionsMessage,
  formatOptions,
  type OptionEntry,
} from "../../../src/core/schema/options";
import { schemaFixturesRegistry } from "../../support/schema-fixtures";

let registry: FileRegistry;
before(async () => {
  registry = await schemaFixturesRegistry();
});

function optionsOf(name: string): OptionEntry[] {
  const found = lookup(registry, name);
  assert.ok(found, name);
  return decodeOptions(found.desc, registry);
}

function std(name: string, value: string): OptionEntry {
  return { name, value, custom: false };
}

function custom(name: string, value: string): OptionEntry {
  return { name, value, custom: true };
}

describe("decodeOptions: standard options", () => {
  test("file options", () => {
    assert.deepEqual(decodeOptions(registry.getFile("fixtures/proto2/legacy.proto")!, registry), [
      std("java_package", '"com.example.fixtures.proto2"'),
      std("optimize_for", "LITE_RUNTIME"),
      std("go_package", '"example.com/fixtures/proto2;proto2pb"'),
    ]);
  });

  test("field, message, enum, enum value and method options by field name", () => {
    assert.deepEqual(optionsOf("fixtures.v1.GreetRequest.token"), [std("debug_redact", "true")]);
    assert.deepEqual(optionsOf("fixtures.v1.GreetRequest.old_name"), [std("deprecated", "true")]);
    assert.deepEqual(optionsOf("fixtures.v1.GreetRequest.unpacked"), [std("packed", "false")]);
    assert.deepEqual(optionsOf("fixtures.proto2.Legacy.values"), [std("packed", "true")]);
    assert.deepEqual(optionsOf("fixtures.v1.Legacy"), [std("deprecated", "true")]);
    assert.deepEqual(optionsOf("fixtures.v1.Status"), [std("allow_alias", "true")]);
    assert.deepEqual(optionsOf("fixtures.v1.LANGUAGE_OLD_NL"), [std("deprecated", "true")]);
    assert.deepEqual(optionsOf("fixtures.v1.Greeter.Greet"), [std("idempotency_level", "NO_SIDE_EFFECTS")]);
    assert.deepEqual(optionsOf("fixtures.v1.Greeter.Chat"), [std("deprecated", "true")]);
  });

  test("options of descriptors without a wrapper: map entries", () => {
    const request = lookup(registry, "fixtures.v1.GreetRequest")!.desc as DescMessage;
    const entry = request.proto.nestedType.find((m) => m.name === "LabelsEntry");
    assert.deepEqual(decodeOptionsMessage(entry?.options, registry), [std("map_entry", "true")]);
    assert.deepEqual(decodeOptionsMessage(undefined, registry), []);
  });

  test("elements without options have none", () => {
    assert.deepEqual(optionsOf("fixtures.v1.GreetRequest.name"), []);
    assert.deepEqual(optionsOf("fixtures.v1.Greeter"), []);
    assert.deepEqual(optionsOf("fixtures.v1.GreetRequest.address"), []);
  });

  test("editions features, one entry per feature", () => {
    assert.deepEqual(decodeOptions(registry.getFile("fixtures/editions/features.proto")!, registry), [
      std("features.field_presence", "IMPLICIT"),
      std("features.enum_type", "OPEN"),
    ]);
    assert.deepEqual(optionsOf("fixtures.editions.Settings.values"), [
      std("features.repeated_field_encoding", "EXPANDED"),
    ]);
    assert.deepEqual(optionsOf("fixtures.editions.Settings.id"), [
      std("features.field_presence", "LEGACY_REQUIRED"),
    ]);
    assert.deepEqual(optionsOf("fixtures.editions.Settings.child"), [
      std("features.message_encoding", "DELIMITED"),
    ]);
    assert.deepEqual(optionsOf("fixtures.editions.Strict"), [std("features.enum_type", "CLOSED")]);
  });
});

describe("decodeOptions: custom options", () => {
  test("on every kind of element", () => {
    assert.deepEqual(decodeOptions(registry.getFile("fixtures/options/annotated.proto")!, registry), [
      std("java_package", '"com.example.fixtures.options"'),
      custom("(fixtures.options.file_owner)", '"team-schema"'),
    ]);
    assert.deepEqual(optionsOf("fixtures.options.Annotated.choice"), [
      custom("(fixtures.options.oneof_required)", "true"),
    ]);
    assert.deepEqual(optionsOf("fixtures.options.Kind"), [
      custom("(fixtures.options.enum_severity)", "SEVERITY_LOW"),
    ]);
    assert.deepEqual(optionsOf("fixtures.options.Kind.KIND_SPECIAL"), [
      std("deprecated", "true"),
      custom("(fixtures.options.value_label)", '"special"'),
    ]);
    assert.deepEqual(optionsOf("fixtures.options.AnnotatedService"), [
      custom("(fixtures.options.service_owner)", '"platform"'),
    ]);
  });

  test("message-typed options with nested messages, enums, lists and 64-bit numbers", () => {
    assert.deepEqual(optionsOf("fixtures.options.Annotated"), [
      custom("(fixtures.options.message_internal)", "true"),
      custom(
        "(fixtures.options.message_rule)",
        '{ name: "annotated", level: 3, severity: SEVERITY_HIGH, tags: ["a", "b"], limit: { max: 9000000000, min: 1 }, strict: true }',
      ),
    ]);
    assert.deepEqual(optionsOf("fixtures.options.AnnotatedService.Do"), [
      std("idempotency_level", "IDEMPOTENT"),
      custom("(fixtures.options.method_rule)", '{ name: "do", severity: SEVERITY_LOW, limit: { max: -1 } }'),
      custom("(fixtures.options.method_timeout_ms)", "1500"),
    ]);
  });

  test("repeated options, escaped strings, standard and custom together", () => {
    const note = optionsOf("fixtures.options.Annotated.note");
    assert.deepEqual(note, [
      std("deprecated", "true"),
      custom("(fixtures.options.field_codes)", "[1, 2]"),
      custom("(fixtures.options.field_note)", '"hello \\"world\\""'),
      custom("(fixtures.options.field_rule)", '{ name: "n", level: 1 }'),
    ]);
    assert.deepEqual(formatOptions(note), [
      "deprecated = true",
      "(fixtures.options.field_codes) = [1, 2]",
      '(fixtures.options.field_note) = "hello \\"world\\""',
      '(fixtures.options.field_rule) = { name: "n", level: 1 }',
    ]);
  });

  test("options set on the option's own message and enum", () => {
    assert.deepEqual(optionsOf("fixtures.options.Rule.name"), [
      custom("(fixtures.options.field_note)", '"rule name"'),
    ]);
    assert.deepEqual(optionsOf("fixtures.options.Severity.SEVERITY_LOW"), [
      custom("(fixtures.options.value_label)", '"low"'),
    ]);
  });

  test("without the extension in the registry, a custom option is listed by field number", () => {
    const desc = lookup(registry, "fixtures.options.AnnotatedService")!.desc;
    assert.deepEqual(decodeOptions(desc), [custom("50007", '"platform"')]);
    // A registry that holds the service but not the extensions (a partial reflection answer).
    assert.deepEqual(decodeOptions(desc, createRegistry(desc as DescService)), [
      custom("50007", '"platform"'),
    ]);
    assert.deepEqual(
      decodeOptions(lookup(registry, "fixtures.options.Annotated")!.desc).map((e) => e.name),
      ["50002", "50012"],
    );
  });

  test("a custom option whose bytes do not decode as its type is listed raw, never thrown", async () => {
    const { create } = await import("@bufbuild/protobuf");
    const { MessageOptionsSchema } = await import("@bufbuild/protobuf/wkt");
    // (fixtures.options.message_rule) = 50002 is a message: its bytes hold a tag that overflows.
    const options = create(MessageOptionsSchema, {});
    options.$unknown = [
      { no: 50002, wireType: 2, data: Uint8Array.from([6, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f]) },
    ];
    const entries = decodeOptionsMessage(options, registry);
    assert.deepEqual(
      entries.map((e) => [e.name, e.custom]),
      [["50002", true]],
    );
  });
});
