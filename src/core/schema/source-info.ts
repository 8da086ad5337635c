// Source positions and comments of descriptors, read from the source_code_info of their file.
// The path of an element and its comments come from @bufbuild/protoplugin's getComments; the spans
// are looked up in a per-file table so repeated hovers do not rescan every location.
import type { DescFile } from "@bufbuild/protobuf";
import { getComments } from "@bufbuild/protoplugin";
import type { NamedDesc } from "./types";

/** A zero-based source range, as in source_code_info spans. */
export interface SourceSpan {
  startLine: number;
  startColumn: number;
  endLine: number;
  endColumn: number;
}

/** The comments attached to a declaration, line breaks normalized to LF. */
export interface SourceComments {
  leading?: string;
  trailing?: string;
  leadingDetached: string[];
}

export interface SourceInfo {
  /** The traversal path of the element in its FileDescriptorProto. */
  path: number[];
  /** Where the element is declared; undefined when the file carries no source info. */
  location?: SourceSpan;
  /** Its comments; undefined when the file carries no source info for the element. */
  comments?: SourceComments;
}

const spanTables = new WeakMap<DescFile, Map<string, SourceSpan>>();

/** The file that declares an element. */
export function fileOf(desc: NamedDesc): DescFile {
  switch (desc.kind) {
    case "rpc":
    case "field":
    case "oneof":
      return desc.parent.file;
    case "enum_value":
      return desc.parent.file;
    default:
      return desc.file;
  }
}

/** Converts a source_code_info span (3 or 4 numbers) to a range; undefined when malformed. */
export function spanFromNumbers(span: readonly number[]): SourceSpan | undefined {
  if (span.length === 3) {
    return { startLine: span[0], startColumn: span[1], endLine: span[0], endColumn: span[2] };
  }
  if (span.length === 4) {
    return { startLine: span[0], startColumn: span[1], endLine: span[2], endColumn: span[3] };
  }
  return undefined;
}

function spanTable(file: DescFile): Map<string, SourceSpan> {
  let table = spanTables.get(file);
  if (table === undefined) {
    table = new Map();
    for (const location of file.proto.sourceCodeInfo?.location ?? []) {
      const key = location.path.join(",");
      // The first location of a path is the whole declaration; later ones (rare) are repeats.
      if (table.has(key)) continue;
      const span = spanFromNumbers(location.span);
      if (span !== undefined) table.set(key, span);
    }
    spanTables.set(file, table);
  }
  return table;
}

/** The span of the location with exactly this path in the file, if the file has source info. */
export function findSpan(file: DescFile, path: readonly number[]): SourceSpan | undefined {
  return spanTable(file).get(path.join(","));
}

/** Path, span and comments of an element. */
export function sourceInfo(desc: NamedDesc): SourceInfo {
  const found = getComments(desc);
  const path = [...found.sourcePath];
  const location = findSpan(fileOf(desc), path);
  if (location === undefined) return { path };
  const comments: SourceComments = { leadingDetached: [...found.leadingDetached] };
  if (found.leading !== undefined) comments.leading = found.leading;
  if (found.trailing !== undefined) comments.trailing = found.trailing;
  return { path, location, comments };
}
