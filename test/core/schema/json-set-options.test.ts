// The JSON form of a descriptor set writes custom options as "[full.name]" keys. Loaded, a JSON set
// must keep them, so that hover docs show the same options as for the binary set.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { before, test } from "node:test";
import { createFileRegistry, fromBinary, toJsonString } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { openDescriptorSetBytes } from "../../../src/core/schema/descriptor-set-source";
import { renderDocs } from "../../../src/core/schema/docs";
import { lookupInSource } from "../../../src/core/schema/source-lookup";
import { buildSchemaFixtures, schemaFixturesDir } from "../../support/schema-fixtures";
import { buildSet } from "./descriptor-set-fixtures";

let binary: Uint8Array;
/** What `buf build -o set.json` writes for the fixtures. */
let bufJson: Uint8Array;

before(async () => {
  binary = (await buildSchemaFixtures()).bytes;
  const set = fromBinary(FileDescriptorSetSchema, binary);
  const files: Record<string, string> = {};
  // Rebuild the fixtures' options files with buf to get its JSON output.
  for (const f of set.file) {
    if (f.name.startsWith("fixtures/options/")) {
      files[f.name] = readFileSync(join(schemaFixturesDir, f.name), "utf8");
    }
  }
  bufJson = await buildSet(files, [], "set.json");
});

const names = [
  "fixtures.options.AnnotatedService",
  "fixtures.options.AnnotatedService.Do",
  "fixtures.options.Annotated",
  "fixtures.options.Annotated.note",
  "fixtures.options.Annotated.choice",
  "fixtures.options.Kind",
  "fixtures.options.Kind.KIND_SPECIAL",
  "fixtures.options.Rule.name",
];

async function optionsOf(bytes: Uint8Array, name: string): Promise<string[]> {
  const source = openDescriptorSetBytes(bytes, "set");
  try {
    const found = await lookupInSource(source, name);
    assert.ok(found, name);
    return renderDocs(found, { registry: found.registry }).options.map((o) => `${o.name} = ${o.value}`);
  } finally {
    await source.close();
  }
}

test("buf's JSON set keeps custom options: the same docs as the binary set", async () => {
  assert.ok(new TextDecoder().decode(bufJson).includes('"[fixtures.options.method_rule]"'));
  for (const name of names) {
    const expected = await optionsOf(binary, name);
    assert.ok(
      expected.some((o) => o.startsWith("(")),
      `${name} has custom options`,
    );
    assert.deepEqual(await optionsOf(bufJson, name), expected, name);
  }
});

test("the JSON form written by the runtime keeps them too", async () => {
  const set = fromBinary(FileDescriptorSetSchema, binary);
  const registry = createFileRegistry(set);
  const text = toJsonString(FileDescriptorSetSchema, set, { registry });
  assert.ok(text.includes('"[fixtures.options.method_rule]"'));
  const json = new TextEncoder().encode(text);
  assert.deepEqual(
    await optionsOf(json, "fixtures.options.AnnotatedService.Do"),
    await optionsOf(binary, "fixtures.options.AnnotatedService.Do"),
  );
});
