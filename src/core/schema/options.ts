// Decodes the options of a descriptor — standard options by field name and custom options by their
// full name in parentheses — into display strings in protobuf text-format style.
//
// Custom options are extensions kept in the options message's unknown fields. The library's text
// format writer (toText with a registry) resolves them with the registry's extensions of that
// options message (getExtensionFor + getExtension), quotes strings and bytes, names enum values and
// expands nested messages and Any; this file only folds its one-field-per-line output into one
// entry per option with compact values such as `{ name: "x", tags: ["a", "b"] }`.
import type { DescFile, DescMessage, Message, Registry } from "@bufbuild/protobuf";
import { toText } from "@bufbuild/protobuf/txtpb";
import {
  EnumOptionsSchema,
  EnumValueOptionsSchema,
  ExtensionRangeOptionsSchema,
  FieldOptionsSchema,
  FileOptionsSchema,
  MessageOptionsSchema,
  MethodOptionsSchema,
  OneofOptionsSchema,
  ServiceOptionsSchema,
} from "@bufbuild/protobuf/wkt";
import type { NamedDesc } from "./types";

export interface OptionEntry {
  /** `deprecated`, `features.field_presence`, `(pkg.my_option)`, or a field number if unresolved. */
  name: string;
  /** The value in text-format style: `true`, `"text"`, `ENUM_NAME`, `{ a: 1, b: "x" }`, `[1, 2]`. */
  value: string;
  /** True for extensions of the options message (custom options). */
  custom: boolean;
}

const optionsSchemas = new Map<string, DescMessage>(
  [
    FileOptionsSchema,
    MessageOptionsSchema,
    FieldOptionsSchema,
    OneofOptionsSchema,
    EnumOptionsSchema,
    EnumValueOptionsSchema,
    ServiceOptionsSchema,
    MethodOptionsSchema,
    ExtensionRangeOptionsSchema,
  ].map((s) => [s.typeName, s as DescMessage]),
);

type TextNode = { name: string; value: string } | { name: string; children: TextNode[] };

/**
 * Decodes the options set on an element. Pass the registry the element came from so that custom
 * options are resolved by name; without it (or when the registry lacks the extension) a custom
 * option is listed by its field number with its raw wire value.
 */
export function decodeOptions(desc: NamedDesc | DescFile, registry?: Registry): OptionEntry[] {
  return decodeOptionsMessage(desc.proto.options, registry);
}

/**
 * Decodes an options message itself (FileOptions, MessageOptions, …), for descriptors that have no
 * Desc wrapper, such as the synthetic entry messages of map fields (`map_entry = true`).
 */
export function decodeOptionsMessage(options: Message | undefined, registry?: Registry): OptionEntry[] {
  if (options === undefined) return [];
  const schema = optionsSchemas.get(options.$typeName);
  if (schema === undefined) return [];
  const entries: OptionEntry[] = [];
  let text: string;
  try {
    text = toText(schema, options, { registry, printUnknownFields: true });
  } catch {
    // A custom option whose bytes do not decode as its extension's type (a damaged descriptor): the
    // options are listed without the registry, custom ones by field number with their raw value.
    try {
      text = toText(schema, options, { printUnknownFields: true });
    } catch {
      return entries;
    }
  }
  for (const node of group(parseText(text))) {
    if (node.name === "uninterpreted_option") continue;
    if (node.name === "features" && "children" in node) {
      flattenInto(entries, "features", node.children, false);
      continue;
    }
    const custom = isCustomName(node.name);
    entries.push({ name: optionName(node.name), value: renderValue(node), custom });
  }
  return entries;
}

/** Renders decoded options as source lines: `deprecated = true`, `(pkg.opt) = "x"`. */
export function formatOptions(entries: readonly OptionEntry[]): string[] {
  return entries.map((e) => `${e.name} = ${e.value}`);
}

function isCustomName(name: string): boolean {
  return name.startsWith("[") || /^[0-9]+$/.test(name);
}

/** `[pkg.ext]` (text format) → `(pkg.ext)` (option syntax). */
function optionName(name: string): string {
  return name.startsWith("[") && name.endsWith("]") ? `(${name.slice(1, -1)})` : name;
}

function flattenInto(out: OptionEntry[], prefix: string, nodes: TextNode[], custom: boolean): void {
  for (const node of group(nodes)) {
    const name = `${prefix}.${optionName(node.name)}`;
    const isCustom = custom || isCustomName(node.name);
    if ("children" in node && node.children.length > 0 && !isListNode(node)) {
      flattenInto(out, name, node.children, isCustom);
    } else {
      out.push({ name, value: renderValue(node), custom: isCustom });
    }
  }
}

const LIST = "\u0000list";

function isListNode(node: TextNode): boolean {
  return "children" in node && node.children.length > 0 && node.children[0].name === LIST;
}

/** Parses the line-per-field output of toText into a tree. */
function parseText(text: string): TextNode[] {
  const root: TextNode[] = [];
  const stack: TextNode[][] = [root];
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "") continue;
    const top = stack[stack.length - 1];
    if (line === "}") {
      if (stack.length > 1) stack.pop();
      continue;
    }
    const sep = line.indexOf(": ");
    if (sep < 0) continue;
    const name = line.slice(0, sep);
    const rest = line.slice(sep + 2);
    if (rest === "{") {
      const children: TextNode[] = [];
      top.push({ name, children });
      stack.push(children);
    } else if (rest === "{}") {
      top.push({ name, children: [] });
    } else {
      top.push({ name, value: rest });
    }
  }
  return root;
}

/** Folds repeated occurrences of a name (repeated fields, map entries) into one list node. */
function group(nodes: TextNode[]): TextNode[] {
  const byName = new Map<string, TextNode[]>();
  for (const node of nodes) {
    const list = byName.get(node.name);
    if (list === undefined) byName.set(node.name, [node]);
    else list.push(node);
  }
  const out: TextNode[] = [];
  for (const [name, list] of byName) {
    if (list.length === 1) out.push(list[0]);
    else out.push({ name, children: list.map((n) => ({ ...n, name: LIST })) });
  }
  return out;
}

function renderValue(node: TextNode): string {
  if ("value" in node) return node.value;
  if (isListNode(node)) return `[${node.children.map(renderValue).join(", ")}]`;
  if (node.children.length === 0) return "{}";
  const fields = group(node.children).map((child) => `${child.name}: ${renderValue(child)}`);
  return `{ ${fields.join(", ")} }`;
}
