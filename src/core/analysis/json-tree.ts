// A tolerant JSON parser for request bodies being typed: it never throws, keeps the offset of every
// token, accepts `{{...}}` references as values, and turns incomplete text (`{"na`, `{"a": 1, `)
// into the best tree it can, so hover, completion and the schema checks work while the user types.
// Syntax errors themselves are reported by the .rpc parser; this tree only serves the schema.

export interface JsonString {
  kind: "string";
  start: number;
  /** Exclusive; the end of the text for an unclosed string. */
  end: number;
  /** The decoded value (the raw inside of an unclosed or invalid string). */
  value: string;
  closed: boolean;
  /** A bare word where a key was expected (`{ nam`), as typed before the quotes. */
  bare?: boolean;
}

export type JsonNode =
  | { kind: "object"; start: number; end: number; closed: boolean; members: JsonMember[] }
  | { kind: "array"; start: number; end: number; closed: boolean; items: JsonNode[] }
  | JsonString
  | { kind: "number"; start: number; end: number; text: string }
  | { kind: "literal"; start: number; end: number; value: boolean | null }
  | { kind: "template"; start: number; end: number }
  | { kind: "invalid"; start: number; end: number; text: string };

export interface JsonMember {
  key: JsonString;
  /** Offset of the colon, when written. */
  colon?: number;
  value?: JsonNode;
}

/** Nesting deeper than this is not parsed further (a body is never that deep; fuzzed input can be). */
const maxDepth = 200;

/** Parses the first JSON value of `text`; undefined when there is none. */
export function parseJsonTree(text: string): JsonNode | undefined {
  const p = new Parser(text);
  p.skipWs();
  if (p.pos >= text.length) return undefined;
  return p.value(0);
}

class Parser {
  pos = 0;
  constructor(private readonly text: string) {}

  skipWs(): void {
    const t = this.text;
    while (this.pos < t.length) {
      const c = t.charCodeAt(this.pos);
      if (c === 32 || c === 9 || c === 10 || c === 13 || c === 0xfeff) this.pos++;
      else break;
    }
  }

  value(depth: number): JsonNode {
    const t = this.text;
    const start = this.pos;
    const c = t[start];
    if (c === "{" && t[start + 1] === "{") return this.template();
    if ((c === "{" || c === "[") && depth >= maxDepth) {
      this.pos = t.length;
      return { kind: "invalid", start, end: t.length, text: t.slice(start) };
    }
    if (c === "{") return this.object(depth);
    if (c === "[") return this.array(depth);
    if (c === '"') return this.string();
    const m = /^-?[0-9][0-9.eE+-]*|^-/.exec(t.slice(start, start + 64));
    if (m) {
      this.pos = start + m[0].length;
      return { kind: "number", start, end: this.pos, text: m[0] };
    }
    const word = /^[A-Za-z_$][\w$.-]*/.exec(t.slice(start, start + 256));
    if (word) {
      this.pos = start + word[0].length;
      const w = word[0];
      if (w === "true" || w === "false" || w === "null") {
        return { kind: "literal", start, end: this.pos, value: w === "null" ? null : w === "true" };
      }
      return { kind: "invalid", start, end: this.pos, text: w };
    }
    this.pos = start + 1;
    return { kind: "invalid", start, end: this.pos, text: c ?? "" };
  }

  template(): JsonNode {
    const start = this.pos;
    const close = this.text.indexOf("}}", start + 2);
    const nl = this.text.indexOf("\n", start);
    const end = close >= 0 && (nl < 0 || close < nl) ? close + 2 : nl >= 0 ? nl : this.text.length;
    this.pos = end;
    return { kind: "template", start, end };
  }

  string(): JsonString {
    const t = this.text;
    const start = this.pos;
    let i = start + 1;
    let escaped = false;
    for (; i < t.length; i++) {
      const ch = t[i];
      if (ch === "\n") break;
      if (escaped) escaped = false;
      else if (ch === "\\") escaped = true;
      else if (ch === '"') {
        this.pos = i + 1;
        const raw = t.slice(start, i + 1);
        let value: string;
        try {
          value = JSON.parse(raw) as string;
        } catch {
          value = raw.slice(1, -1);
        }
        return { kind: "string", start, end: i + 1, value, closed: true };
      }
    }
    this.pos = i;
    return { kind: "string", start, end: i, value: t.slice(start + 1, i), closed: false };
  }

  object(depth: number): JsonNode {
    const t = this.text;
    const start = this.pos;
    this.pos++;
    const members: JsonMember[] = [];
    for (;;) {
      this.skipWs();
      if (this.pos >= t.length) return { kind: "object", start, end: t.length, closed: false, members };
      const c = t[this.pos];
      if (c === "}") {
        this.pos++;
        return { kind: "object", start, end: this.pos, closed: true, members };
      }
      if (c === "]") return { kind: "object", start, end: this.pos, closed: false, members };
      if (c === ",") {
        this.pos++;
        continue;
      }
      let key: JsonString | undefined;
      if (c === '"') key = this.string();
      else {
        const word = /^[A-Za-z_$][\w$]*/.exec(t.slice(this.pos, this.pos + 256));
        if (word) {
          key = {
            kind: "string",
            start: this.pos,
            end: this.pos + word[0].length,
            value: word[0],
            closed: false,
            bare: true,
          };
          this.pos = key.end;
        }
      }
      if (!key) {
        // Not a key: skip the value-like thing so the loop always advances.
        const before = this.pos;
        this.value(depth + 1);
        if (this.pos === before) this.pos++;
        continue;
      }
      const member: JsonMember = { key };
      members.push(member);
      this.skipWs();
      if (t[this.pos] !== ":") continue;
      member.colon = this.pos;
      this.pos++;
      this.skipWs();
      const v = t[this.pos];
      if (this.pos >= t.length || v === "," || v === "}" || v === "]") continue;
      member.value = this.value(depth + 1);
    }
  }

  array(depth: number): JsonNode {
    const t = this.text;
    const start = this.pos;
    this.pos++;
    const items: JsonNode[] = [];
    for (;;) {
      this.skipWs();
      if (this.pos >= t.length) return { kind: "array", start, end: t.length, closed: false, items };
      const c = t[this.pos];
      if (c === "]") {
        this.pos++;
        return { kind: "array", start, end: this.pos, closed: true, items };
      }
      if (c === "}") return { kind: "array", start, end: this.pos, closed: false, items };
      if (c === ",") {
        this.pos++;
        continue;
      }
      const before = this.pos;
      items.push(this.value(depth + 1));
      if (this.pos === before) this.pos++;
    }
  }
}

export type JsonPathSegment = string | number;

/** What is at an offset of a body document, for hover and completion. */
export interface JsonLocation {
  /** The keys and indices leading to the object or array that holds the offset. */
  path: JsonPathSegment[];
  /** A key of that object, or a value (of a member, or an element of an array). */
  role: "key" | "value";
  /** For a value: the member's key or the element's index. For a key: the key typed so far. */
  key?: JsonPathSegment;
  /** The token under the offset, if any. */
  token?: JsonNode;
  /** The container at `path`. */
  container: JsonNode;
}

/**
 * Finds what is at `offset`. A token holds the offsets from its first character to its last (and,
 * for completion, the offset just after a string not yet closed). Outside any token, the role is
 * what the container expects next there.
 */
export function locate(root: JsonNode | undefined, offset: number): JsonLocation | undefined {
  if (root?.kind !== "object" || offset <= root.start) return undefined;
  if (root.closed && offset >= root.end) return undefined;
  return locateIn(root, [], offset);
}

function inside(node: JsonNode, offset: number): boolean {
  if (offset >= node.start && offset < node.end) return true;
  // Just after a token being typed: `"na|`, `tr|`, `12|`.
  if (offset === node.end) {
    if (node.kind === "string") return !node.closed;
    return node.kind === "number" || node.kind === "literal" || node.kind === "invalid";
  }
  return false;
}

function containerHolds(node: JsonNode, offset: number): boolean {
  if (node.kind !== "object" && node.kind !== "array") return false;
  if (offset <= node.start) return false;
  return node.closed ? offset < node.end : offset <= node.end;
}

function locateIn(node: JsonNode, path: JsonPathSegment[], offset: number): JsonLocation {
  if (node.kind === "array") {
    let index = 0;
    for (const [i, item] of node.items.entries()) {
      if (containerHolds(item, offset)) return locateIn(item, [...path, i], offset);
      if (inside(item, offset)) return { path, role: "value", key: i, token: item, container: node };
      if (item.end <= offset) index = i + 1;
    }
    return { path, role: "value", key: index, container: node };
  }
  if (node.kind !== "object") return { path, role: "value", container: node };
  let expecting: JsonLocation = { path, role: "key", container: node };
  for (const m of node.members) {
    if (inside(m.key, offset)) {
      return { path, role: "key", key: m.key.value, token: m.key, container: node };
    }
    if (m.value) {
      if (containerHolds(m.value, offset)) return locateIn(m.value, [...path, m.key.value], offset);
      if (inside(m.value, offset)) {
        return { path, role: "value", key: m.key.value, token: m.value, container: node };
      }
    }
    const end = m.value?.end ?? (m.colon !== undefined ? m.colon + 1 : m.key.end);
    if (end <= offset) {
      expecting =
        m.colon !== undefined && !m.value
          ? { path, role: "value", key: m.key.value, container: node }
          : { path, role: "key", container: node };
    }
  }
  return expecting;
}
