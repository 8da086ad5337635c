// Hover documentation of a schema element as plain Markdown: a title (kind and full name, with the
// facts that matter for the kind), the declaration, the comments and the options.
//
// Everything that comes from a schema — comments, names, option values — may come from a server we
// do not control, so it is either escaped (comments) or placed in code spans and fenced code blocks,
// where Markdown renders it as literal text: no HTML, no links, no images.
import {
  type DescExtension,
  type DescField,
  isFieldSet,
  type Registry,
  ScalarType,
} from "@bufbuild/protobuf";
import { FieldDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { getDeclarationString } from "@bufbuild/protoplugin";
import type { LookupResult } from "./lookup";
import { decodeOptions, formatOptions, type OptionEntry } from "./options";
import type { SourceComments } from "./source-info";

export interface DocsOptions {
  /** The registry the element came from, to resolve custom options by name. */
  registry?: Registry;
}

export interface Docs {
  /** The whole hover text. */
  markdown: string;
  /** The title as plain text: `bidi streaming method fixtures.v1.Greeter.Chat`. */
  title: string;
  /** The element as declared in protobuf source (without its body), when it has a one-line form. */
  declaration?: string;
  /** Comment blocks in source order (detached, leading, trailing), indentation normalized. */
  comments: string[];
  options: OptionEntry[];
}

type FieldLike = DescField | DescExtension;

const methodKinds = {
  unary: "unary method",
  server_streaming: "server streaming method",
  client_streaming: "client streaming method",
  bidi_streaming: "bidi streaming method",
} as const;

/** Renders hover documentation for a looked-up element. */
export function renderDocs(result: LookupResult, options?: DocsOptions): Docs {
  const { desc, fullName } = result;
  const opts = decodeOptions(desc, options?.registry);
  const facts: string[] = [];
  let kindLabel: string = result.kind.replace("_", " ");
  let declaration: string | undefined;
  switch (desc.kind) {
    case "service":
      declaration = `service ${desc.name}`;
      facts.push(`${desc.methods.length} method${desc.methods.length === 1 ? "" : "s"}`);
      break;
    case "rpc": {
      kindLabel = methodKinds[desc.methodKind];
      const input = `${desc.methodKind === "client_streaming" || desc.methodKind === "bidi_streaming" ? "stream " : ""}${desc.input.typeName}`;
      const output = `${desc.methodKind === "server_streaming" || desc.methodKind === "bidi_streaming" ? "stream " : ""}${desc.output.typeName}`;
      declaration = `rpc ${desc.name}(${input}) returns (${output})`;
      facts.push(`${code(input)} → ${code(output)}`);
      break;
    }
    case "message":
      declaration = `message ${desc.name}`;
      facts.push(`${desc.fields.length} field${desc.fields.length === 1 ? "" : "s"}`);
      break;
    case "enum":
      declaration = `enum ${desc.name}`;
      facts.push(
        desc.open ? "open" : "closed",
        `${desc.values.length} value${desc.values.length === 1 ? "" : "s"}`,
      );
      break;
    case "enum_value":
      declaration = getDeclarationString(desc);
      facts.push(`number ${desc.number}`);
      break;
    case "oneof":
      declaration = `oneof ${desc.name}`;
      facts.push(`one of ${desc.fields.map((f) => code(f.name)).join(", ")}`);
      break;
    case "field":
    case "extension": {
      declaration = getDeclarationString(desc);
      facts.push(`number ${desc.number}`, `type ${code(fieldType(desc))}`, label(desc));
      facts.push(`JSON ${code(desc.kind === "extension" ? `[${desc.typeName}]` : desc.jsonName)}`);
      if (isFieldSet(desc.proto, FieldDescriptorProtoSchema.field.defaultValue)) {
        facts.push(`default ${code(defaultText(desc))}`);
      }
      if (desc.kind === "field" && desc.oneof !== undefined) facts.push(`in oneof ${code(desc.oneof.name)}`);
      if (desc.kind === "extension") facts.push(`extends ${code(desc.extendee.typeName)}`);
      break;
    }
  }
  if (desc.deprecated) facts.push("deprecated");

  const title = `${kindLabel} ${fullName}`;
  const comments = commentBlocks(result.comments);
  const lines: string[] = [`**${escapeMarkdown(kindLabel)}** ${code(fullName)}`];
  if (facts.length > 0) lines[0] += ` — ${facts.join(" · ")}`;
  const parts: string[] = [lines.join("\n")];
  if (declaration !== undefined) parts.push(fence(declaration, "proto"));
  for (const block of comments) parts.push(renderComment(block));
  if (opts.length > 0) parts.push(`Options:\n\n${fence(formatOptions(opts).join("\n"), "proto")}`);
  const where =
    result.location !== undefined
      ? `${code(result.file.proto.name)} line ${result.location.startLine + 1}`
      : code(result.file.proto.name);
  parts.push(`*Declared in* ${where}`);
  const docs: Docs = { markdown: `${parts.join("\n\n")}\n`, title, comments, options: opts };
  if (declaration !== undefined) docs.declaration = declaration;
  return docs;
}

/** The default as written in source: strings and bytes quoted, everything else as stored. */
function defaultText(field: FieldLike): string {
  const value = field.proto.defaultValue;
  // descriptor.proto stores string defaults as written and bytes defaults already C-escaped.
  if (field.scalar === ScalarType.STRING) return `"${value.replace(/["\\]/g, (c) => `\\${c}`)}"`;
  if (field.scalar === ScalarType.BYTES) return `"${value}"`;
  return value;
}

function fieldType(field: FieldLike): string {
  const scalarName = (s: ScalarType) => ScalarType[s].toLowerCase();
  const element =
    field.message?.typeName ??
    field.enum?.typeName ??
    (field.scalar !== undefined ? scalarName(field.scalar) : "");
  if (field.fieldKind === "map") return `map<${scalarName(field.mapKey)}, ${element}>`;
  return field.fieldKind === "list" ? `repeated ${element}` : element;
}

function label(field: FieldLike): string {
  if (field.fieldKind === "list") return "repeated";
  if (field.fieldKind === "map") return "map";
  // FeatureSet_FieldPresence: 1 explicit, 2 implicit, 3 legacy required.
  if (field.presence === 3) return "required";
  if (field.presence === 1) return "optional (explicit presence)";
  return "singular (implicit presence)";
}

/** Comment blocks in source order with common indentation and surrounding blank lines removed. */
export function commentBlocks(comments: SourceComments | undefined): string[] {
  if (comments === undefined) return [];
  const raw = [...comments.leadingDetached];
  if (comments.leading !== undefined) raw.push(comments.leading);
  if (comments.trailing !== undefined) raw.push(comments.trailing);
  return raw.map(normalizeComment).filter((c) => c !== "");
}

/** Removes the common indentation, trailing spaces and leading/trailing blank lines of a comment. */
export function normalizeComment(text: string): string {
  const lines = text
    .replace(/\r\n?/g, "\n")
    .split("\n")
    .map((l) => l.replace(/\s+$/, ""));
  while (lines.length > 0 && lines[0] === "") lines.shift();
  while (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  let indent = Number.POSITIVE_INFINITY;
  for (const line of lines) {
    if (line === "") continue;
    indent = Math.min(indent, line.length - line.trimStart().length);
  }
  if (!Number.isFinite(indent)) indent = 0;
  return lines.map((l) => l.slice(indent)).join("\n");
}

/** A comment as Markdown: escaped text, line breaks and indentation kept. */
function renderComment(text: string): string {
  return text
    .split("\n")
    .map((line) => {
      const body = line.trimStart();
      const indent = line.length - body.length;
      return "&nbsp;".repeat(indent) + escapeMarkdown(body);
    })
    .join("  \n")
    .replace(/ {2}\n(?=(&nbsp;)*\s*(\n|$))/g, "\n");
}

/**
 * Escapes text so Markdown renders it literally: HTML-significant characters become entities and
 * every other Markdown punctuation character is backslash-escaped.
 */
export function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|~<>&]/g, (c) => {
    switch (c) {
      case "<":
        return "&lt;";
      case ">":
        return "&gt;";
      case "&":
        return "&amp;";
      default:
        return `\\${c}`;
    }
  });
}

/** An inline code span that holds any text literally. */
export function code(text: string): string {
  const single = text.replace(/[\r\n]+/g, " ");
  let longest = 0;
  for (const run of single.match(/`+/g) ?? []) longest = Math.max(longest, run.length);
  const ticks = "`".repeat(longest + 1);
  const pad = single.startsWith("`") || single.endsWith("`") ? " " : "";
  return `${ticks}${pad}${single}${pad}${ticks}`;
}

/** A fenced code block that holds any text literally. */
function fence(text: string, lang: string): string {
  let longest = 2;
  for (const run of text.match(/`{3,}/g) ?? []) longest = Math.max(longest, run.length);
  const ticks = "`".repeat(longest + 1);
  return `${ticks}${lang}\n${text}\n${ticks}`;
}
