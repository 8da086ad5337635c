// Fuzzes what the byte-level fuzz test rarely reaches: descriptor sets that decode fine but make no
// sense (references to the wrong kind of type, bad numbers, missing or cyclic imports, broken map
// entries and oneofs), and damaged JSON sets. Whatever the input, loading it and using what it
// yields — look-ups, docs, JSON skeletons — either works or throws a ProtocallError: never another
// error, never a hang. Each run is bounded in time.
import assert from "node:assert/strict";
import { before, test } from "node:test";
import { clone, create, fromBinary, type Registry, toBinary, toJsonString } from "@bufbuild/protobuf";
import {
  type DescriptorProto,
  type FieldDescriptorProto,
  type FileDescriptorProto,
  type FileDescriptorSet,
  FileDescriptorSetSchema,
  MessageOptionsSchema,
} from "@bufbuild/protobuf/wkt";
import { ProtocallError } from "../../../src/core/errors";
import { openDescriptorSetBytes } from "../../../src/core/schema/descriptor-set-source";
import { renderDocs } from "../../../src/core/schema/docs";
import { messageSkeleton } from "../../../src/core/schema/skeleton";
import { lookupInSource } from "../../../src/core/schema/source-lookup";
import { buildSchemaFixtures } from "../../support/schema-fixtures";

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

let seed: FileDescriptorSet;
/** Every fully qualified type name in the seed, with a leading dot, and a few that exist nowhere. */
let typeNames: string[];

before(async () => {
  seed = clone(FileDescriptorSetSchema, (await buildSchemaFixtures()).set);
  // The well-known files' comments are large and never what a mutation is about.
  for (const f of seed.file) if (f.name.startsWith("google/")) f.sourceCodeInfo = undefined;
  typeNames = [".nowhere.Thing", "Relative", ".", ""];
  const walk = (prefix: string, messages: DescriptorProto[]) => {
    for (const m of messages) {
      typeNames.push(`${prefix}.${m.name}`);
      for (const e of m.enumType) typeNames.push(`${prefix}.${m.name}.${e.name}`);
      walk(`${prefix}.${m.name}`, m.nestedType);
    }
  };
  for (const f of seed.file) {
    const pkg = f.package ? `.${f.package}` : "";
    walk(pkg, f.messageType);
    for (const e of f.enumType) typeNames.push(`${pkg}.${e.name}`);
    for (const s of f.service) typeNames.push(`${pkg}.${s.name}`);
  }
});

type Pick = <T>(list: readonly T[]) => T;

function allMessages(file: FileDescriptorProto): DescriptorProto[] {
  const out: DescriptorProto[] = [];
  const walk = (list: DescriptorProto[]) => {
    for (const m of list) {
      out.push(m);
      walk(m.nestedType);
    }
  };
  walk(file.messageType);
  return out;
}

function allFields(file: FileDescriptorProto): FieldDescriptorProto[] {
  return [...allMessages(file).flatMap((m) => [...m.field, ...m.extension]), ...file.extension];
}

/** Changes one thing in a set that still encodes: a name, a number, a reference, an import. */
function mutate(random: () => number, set: FileDescriptorSet): void {
  const pick: Pick = (list) => list[Math.floor(random() * list.length)];
  const files = set.file.filter((f) => f.name.startsWith("fixtures/"));
  const file = pick(files);
  const fields = allFields(file);
  const messages = allMessages(file);
  switch (Math.floor(random() * 12)) {
    case 0: // a reference to any type, of any kind, or to nothing
      if (fields.length) pick(fields).typeName = pick(typeNames);
      break;
    case 1: // a field of another type (message ↔ scalar ↔ enum ↔ group)
      if (fields.length) pick(fields).type = 1 + Math.floor(random() * 18);
      break;
    case 2: // a label out of place (required in proto3, repeated maps, …)
      if (fields.length) pick(fields).label = 1 + Math.floor(random() * 3);
      break;
    case 3: // numbers: zero, negative, reserved, duplicated, huge
      if (fields.length) pick(fields).number = pick([0, -1, 19000, 1, 2, 536870911, 536870912]);
      break;
    case 4: // a oneof index past the oneofs
      if (fields.length) pick(fields).oneofIndex = pick([0, 1, 5, -1]);
      break;
    case 5: // a message claiming (or losing) map_entry
      if (messages.length) {
        const m = pick(messages);
        m.options ??= create(MessageOptionsSchema);
        m.options.mapEntry = !m.options.mapEntry;
      }
      break;
    case 6: // an import removed, duplicated, of itself, or of a file that does not exist
      if (random() < 0.5 && file.dependency.length)
        file.dependency.splice(Math.floor(random() * file.dependency.length), 1);
      else file.dependency.push(pick([file.name, "nowhere.proto", ...set.file.map((f) => f.name)]));
      break;
    case 7: // a whole file dropped
      set.file.splice(set.file.indexOf(pick(set.file)), 1);
      break;
    case 8: // a duplicated or emptied name
      if (messages.length) pick(messages).name = pick(["", "Dup", messages[0].name, "a.b"]);
      break;
    case 9: // a method whose input or output is not a message
      for (const s of file.service) {
        const m = pick(s.method);
        if (m) m[random() < 0.5 ? "inputType" : "outputType"] = pick(typeNames);
      }
      break;
    case 10: // an extension of something that is not a message, or without a number range
      if (fields.length) pick(fields).extendee = pick(typeNames);
      break;
    default: // a package renamed (names no longer match references)
      file.package = pick(["", "other", "fixtures", `${file.package}.x`]);
  }
}

/** Loads bytes and uses everything a user can reach; ProtocallErrors are fine, nothing else is. */
async function exercise(bytes: Uint8Array, names: readonly string[]): Promise<"ok" | "rejected"> {
  let source: ReturnType<typeof openDescriptorSetBytes>;
  try {
    source = openDescriptorSetBytes(bytes, "fuzz");
  } catch (err) {
    if (err instanceof ProtocallError) return "rejected";
    throw err;
  }
  let rejected = false;
  const attempt = async (fn: () => Promise<unknown> | unknown) => {
    try {
      await fn();
    } catch (err) {
      if (!(err instanceof ProtocallError)) throw err;
      rejected = true;
    }
  };
  try {
    await attempt(() => source.listServices());
    for (const name of names) {
      await attempt(async () => {
        const found = await source.findType(name);
        if (found?.kind === "message") messageSkeleton(found, { maxDepth: 3 });
        if (found?.kind === "service")
          for (const m of found.methods) messageSkeleton(m.input, { maxDepth: 3 });
      });
      await attempt(async () => {
        const docs = await lookupInSource(source, name);
        if (docs) renderDocs(docs, { registry: docs.registry as Registry });
      });
    }
  } finally {
    await source.close();
  }
  return rejected ? "rejected" : "ok";
}

const probeNames = [
  "fixtures.v1.Greeter",
  "fixtures.v1.GreetRequest",
  "fixtures.v1.GreetResponse",
  "fixtures.v1.GreetRequest.labels",
  "fixtures.v1.Node",
  "fixtures.options.AnnotatedService.Do",
  "fixtures.options.Annotated.note",
  "fixtures.proto2.Legacy",
  "fixtures.proto2.priority",
  "fixtures.editions.Settings",
];

function fail(what: string, err: unknown): never {
  assert.fail(`${what}: threw ${String(err)}\n${(err as Error)?.stack ?? ""}`);
}

test("sets that decode but make no sense: only ProtocallErrors, bounded in time", async () => {
  const random = rng(0xdec0de);
  // At least a fixed number of runs (so a slow machine still fuzzes), then more until the deadline.
  const deadline = performance.now() + 2500;
  const counts = { ok: 0, rejected: 0 };
  let runs = 0;
  while (runs < 10 || performance.now() < deadline) {
    runs++;
    const set = clone(FileDescriptorSetSchema, seed);
    for (let n = 1 + Math.floor(random() * 3); n > 0; n--) mutate(random, set);
    const bytes = toBinary(FileDescriptorSetSchema, set);
    try {
      counts[await exercise(bytes, probeNames)]++;
    } catch (err) {
      fail(`mutation run #${runs} (seed 0xdec0de)`, err);
    }
  }
  assert.ok(counts.ok > 0 && counts.rejected > 0, JSON.stringify(counts));
});

test("damaged JSON sets: only ProtocallErrors, bounded in time", async () => {
  const random = rng(0x15011);
  const small = clone(FileDescriptorSetSchema, seed);
  small.file = small.file.filter((f) => !f.name.startsWith("google/protobuf/descriptor"));
  const text = toJsonString(FileDescriptorSetSchema, small);
  const deadline = performance.now() + 1500;
  const counts = { ok: 0, rejected: 0 };
  let runs = 0;
  while (runs < 20 || performance.now() < deadline) {
    runs++;
    const at = Math.floor(random() * text.length);
    const len = Math.floor(random() * 8);
    const junk = ['"', "{", "}", "[", "]", ",", ":", "1", "-1", "null", "true", '"x"', "1e99", ""][
      Math.floor(random() * 14)
    ];
    const damaged = text.slice(0, at) + junk + text.slice(at + len);
    try {
      counts[await exercise(new TextEncoder().encode(damaged), probeNames.slice(0, 4))]++;
    } catch (err) {
      fail(`JSON run #${runs} (damage at ${at})`, err);
    }
  }
  assert.ok(counts.rejected > 0, JSON.stringify(counts));
});

test("the fixtures themselves load with no error at all", async () => {
  assert.equal(await exercise(toBinary(FileDescriptorSetSchema, seed), probeNames), "ok");
  assert.equal(
    await exercise(new TextEncoder().encode(toJsonString(FileDescriptorSetSchema, seed)), probeNames),
    "ok",
  );
  assert.ok(fromBinary(FileDescriptorSetSchema, toBinary(FileDescriptorSetSchema, seed)).file.length > 5);
});
