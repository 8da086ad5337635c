// `drift`: two schemas in, differences out. Both sides are opened (open-side.ts), narrowed to what a
// server serves when one side is a server, compared element by element (compare.ts), and judged by
// the bundled `buf breaking` with the first side as the input and the other as `--against`, as buf
// spells it: "breaking" means a client built from the against side (the source) may fail against
// the input (the server). Each difference is placed in the source (file:line from source info) on
// every side that has it. Well-known files are taken from the runtime for both sides, so they never
// differ.
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { FileDescriptorProto } from "@bufbuild/protobuf/wkt";
import { wellKnownFiles } from "../schema/well-known-files";
import { type BreakingRules, type BufFinding, bufBreaking } from "./buf-breaking";
import { compareSchemas, type PropertyChange, type StructuralDifference } from "./compare";
import { withProtocMapEntryNames } from "./map-entries";
import { type DriftSide, type DriftSideKind, type OpenSideOptions, openSide } from "./open-side";
import { fileElements, type SchemaElement, sourceLines } from "./schema-elements";

/** A place in a side's source: the file (a path on disk for a workspace) and its 1-based line. */
export interface SourcePlace {
  readonly file: string;
  readonly line?: number;
}

export interface Difference {
  /** added: only in the input; missing: only in the against side; changed; rule: a buf finding alone. */
  readonly change: "added" | "missing" | "changed" | "rule";
  readonly element: "message" | "field" | "enum" | "value" | "service" | "method" | "file";
  readonly name: string;
  readonly properties: readonly PropertyChange[];
  /** Where it is in the input; for one only in the against side, where its parent is there. */
  readonly input?: SourcePlace;
  readonly against?: SourcePlace;
  /** Whether buf reports it as breaking. */
  readonly breaking: boolean;
  /** buf's findings for it: rule and message. */
  readonly rules: readonly { rule: string; message: string }[];
}

export interface DriftSideSummary {
  readonly spec: string;
  readonly kind: DriftSideKind;
}

export interface DriftReport {
  readonly input: DriftSideSummary;
  readonly against: DriftSideSummary;
  /** The category of buf's breaking rules the differences were judged by. */
  readonly rules: BreakingRules;
  readonly differences: readonly Difference[];
  /** Services a server's files declare but it does not serve (not differences: the schema has them). */
  readonly unserved: readonly string[];
  /** same, breaking (some difference breaks clients), compatible (differences, none breaking). */
  readonly verdict: "same" | "breaking" | "compatible";
}

export interface DriftOptions extends OpenSideOptions {
  /** buf's rule category; default FILE, or PACKAGE when a server names its files otherwise (see chooseRules). */
  rules?: BreakingRules;
}

/** Compares `input` with `against`. Throws when a side cannot be read or buf cannot run. */
export async function runDrift(input: string, against: string, options: DriftOptions): Promise<DriftReport> {
  const [a, b] = await Promise.all([openSide(input, options), openSide(against, options)]);
  return compareSides(a, b, options);
}

/** The comparison of two opened sides. */
export async function compareSides(
  a: DriftSide,
  b: DriftSide,
  options: { bufPath?: string; env?: NodeJS.ProcessEnv; signal?: AbortSignal; rules?: BreakingRules } = {},
): Promise<DriftReport> {
  const servers = a.kind === "server" || b.kind === "server";
  const filesA = withProtocMapEntryNames(inScope(a, servers));
  const filesB = withProtocMapEntryNames(inScope(b, servers));
  const structural = compareSchemas(ownFiles(filesA), ownFiles(filesB));
  const rules = options.rules ?? chooseRules(a, filesA, b, filesB);
  const findings = await bufBreaking(withWellKnown(filesA), withWellKnown(filesB), { ...options, rules });
  const placeA = placer(a);
  const placeB = placer(b);
  const used = new Set<BufFinding>();
  const differences: Difference[] = structural.map((d) => {
    const mine = findings.filter((f) => concerns(f, d));
    for (const f of mine) used.add(f);
    return {
      change: d.change,
      element: d.element,
      name: d.name,
      properties: d.properties,
      input: placeA(d.inputElement),
      against: placeB(d.againstElement),
      breaking: mine.length > 0,
      rules: mine.map((f) => ({ rule: f.rule, message: f.message })),
    };
  });
  // A finding of no difference above (a file option, a oneof, a file moved or deleted) is a
  // difference too, of the element buf placed it at.
  const elementsA = new Map(filesA.flatMap((f) => fileElements(f).map((e) => [e.id, e] as const)));
  const byPlace = new Map<string, BufFinding[]>();
  for (const f of findings) {
    if (used.has(f)) continue;
    const key = f.elementId ?? `file:${f.file}`;
    byPlace.set(key, [...(byPlace.get(key) ?? []), f]);
  }
  for (const [key, group] of byPlace) {
    const at = elementsA.get(key);
    const file = group[0].file;
    differences.push({
      change: "rule",
      element: at?.kind ?? "file",
      name: at?.name ?? file,
      properties: [],
      input: at ? placeA(at) : file ? { file: placeA(undefined, file)?.file ?? file } : undefined,
      breaking: true,
      rules: group.map((f) => ({ rule: f.rule, message: f.message })),
    });
  }
  const unserved = unservedServices(a).concat(unservedServices(b));
  const verdict =
    differences.length === 0 ? "same" : differences.some((d) => d.breaking) ? "breaking" : "compatible";
  return {
    input: { spec: a.spec, kind: a.kind },
    against: { spec: b.spec, kind: b.kind },
    rules,
    differences,
    unserved,
    verdict,
  };
}

/**
 * The files compared. With a server on either side, only what serves: a server's files are already
 * those of its services; a schema keeps the files that declare services and what they import (all
 * of it when it declares none).
 */
function inScope(side: DriftSide, servers: boolean): FileDescriptorProto[] {
  if (!servers || side.kind === "server") return side.files;
  const byName = new Map(side.files.map((f) => [f.name, f]));
  const roots = side.files.filter((f) => f.service.length > 0);
  if (roots.length === 0) return side.files;
  const keep = new Map<string, FileDescriptorProto>();
  const add = (f: FileDescriptorProto) => {
    if (keep.has(f.name)) return;
    keep.set(f.name, f);
    for (const dep of f.dependency) {
      const d = byName.get(dep);
      if (d) add(d);
    }
  };
  for (const f of roots) add(f);
  return side.files.filter((f) => keep.has(f.name));
}

/**
 * A side's files for its image: a well-known file it has is replaced by the runtime's, and one it
 * imports but lacks is added from the runtime (servers leave them out), so both sides have the same.
 */
function withWellKnown(files: FileDescriptorProto[]): FileDescriptorProto[] {
  const wkt = wellKnownFiles();
  const present = new Set(files.map((f) => f.name));
  const added: FileDescriptorProto[] = [];
  const add = (name: string) => {
    const file = wkt.get(name);
    if (!file || present.has(name)) return;
    present.add(name);
    for (const dep of file.dependencies) add(dep.name);
    added.push(file.proto);
  };
  for (const f of files) for (const d of f.dependency) add(d);
  return [...added, ...files.map((f) => (wkt.has(f.name) ? (wkt.get(f.name)?.proto ?? f) : f))];
}

/** Files of the well-known packages, whatever their names: their types are fixed, never compared. */
function ownFiles(files: FileDescriptorProto[]): FileDescriptorProto[] {
  return files.filter((f) => f.package !== "google.protobuf" && !f.package.startsWith("google.protobuf."));
}

/**
 * buf's rule category: FILE (buf's default), unless a server names its files otherwise than the
 * other side (grpc-js names them after their package): then every file would count as deleted, and
 * PACKAGE, which compares by package, says what clients see.
 */
function chooseRules(
  a: DriftSide,
  filesA: FileDescriptorProto[],
  b: DriftSide,
  filesB: FileDescriptorProto[],
) {
  const renamed = (server: FileDescriptorProto[], other: FileDescriptorProto[]) => {
    const names = new Set(other.map((f) => f.name));
    return ownFiles(server).some((f) => !names.has(f.name));
  };
  if (a.kind === "server" && renamed(filesA, filesB)) return "PACKAGE";
  if (b.kind === "server" && renamed(filesB, filesA)) return "PACKAGE";
  return "FILE";
}

/**
 * Whether a buf finding is about this difference: placed at its element in the input, or at an
 * element that encloses it there or at its file (where buf places deletions and renumberings),
 * naming it by its name (`"Line"`, `"Order.Line"`) or number on either side.
 */
function concerns(f: BufFinding, d: StructuralDifference): boolean {
  const input = d.inputElement;
  if (!input || f.elementId === undefined) return false;
  if (d.change !== "missing" && f.elementId === input.id) return true;
  const enclosing = d.change === "missing" ? input.id : input.parent;
  if (f.elementId !== enclosing && f.elementId !== `file:${input.file}`) return false;
  const names = new Set<string>();
  for (const e of [d.change === "missing" ? undefined : input, d.againstElement]) {
    if (!e) continue;
    const parts = e.name.split(".");
    for (let i = parts.length - 1; i >= 0; i--) names.add(parts.slice(i).join("."));
    if (e.kind === "field" || e.kind === "value") names.add(String(e.proto.number));
  }
  return [...names].some((n) => f.message.includes(`"${n}"`));
}

/** Finds the source place of an element (or a file) of a side. */
function placer(side: DriftSide) {
  const lines = new Map<string, Map<string, number>>();
  const display = (file: string) => {
    // A workspace's own files are named by their path on disk; a dependency's stay as imported.
    for (const root of side.roots ?? []) {
      const path = join(root, file);
      if (existsSync(path)) return path;
    }
    return file;
  };
  return (e: SchemaElement | undefined, fileName?: string): SourcePlace | undefined => {
    const file = e?.file ?? fileName;
    if (!file) return undefined;
    const proto = side.files.find((f) => f.name === file);
    if (!proto) return { file: display(file) };
    if (!e) return { file: display(file) };
    let byPath = lines.get(file);
    if (!byPath) lines.set(file, (byPath = sourceLines(proto)));
    const line = byPath.get(e.path.join(","));
    return line === undefined ? { file: display(file) } : { file: display(file), line };
  };
}

function unservedServices(side: DriftSide): string[] {
  if (!side.served) return [];
  const served = new Set(side.served);
  const out: string[] = [];
  for (const f of side.files) {
    for (const s of f.service) {
      const name = f.package ? `${f.package}.${s.name}` : s.name;
      if (!served.has(name) && !name.startsWith("grpc.reflection.")) out.push(name);
    }
  }
  return out.sort();
}
