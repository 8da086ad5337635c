// `{{$file ./path}}` in a request body: a file's content as a field's value, base64 for a `bytes`
// field and text for a `string` field. Which one depends on the field, known only once the method's
// schema is (here, when a JSON document becomes a message: invoke.ts requestFromJson), while
// variables are resolved before (../rpcfile/to-curl.ts). So the body carries a marker naming the
// absolute path, and expandFileValues replaces it by the field's type, reading the file then.
import { readFileSync } from "node:fs";
import { type DescField, type DescMessage, ScalarType } from "@bufbuild/protobuf";
import { ProtocallError } from "../errors";

const prefix = "@@protocall-file:";
const suffix = "@@";
const markerPattern = /@@protocall-file:([^@"\\]*)@@/g;

/** The marker that stands for a file's content in a request body (JSON-safe). */
export function fileMarker(absolutePath: string): string {
  return `${prefix}${encodeURIComponent(absolutePath)}${suffix}`;
}

/** Whether a JSON value holds a file marker anywhere (cheap check before a walk). */
export function hasFileMarker(value: unknown): boolean {
  if (typeof value === "string") return value.includes(prefix);
  if (Array.isArray(value)) return value.some(hasFileMarker);
  if (value !== null && typeof value === "object") return Object.values(value).some(hasFileMarker);
  return false;
}

type Read = (path: string) => Buffer;

/**
 * A copy of a request's JSON with each file marker replaced: in a bytes field the value must be the
 * marker alone and becomes the file's bytes in base64; in a string field each marker becomes the
 * file's text (UTF-8). A marker anywhere else is a ProtocallError naming the field.
 */
export function expandFileValues(desc: DescMessage, value: unknown, read: Read = readFileSync): unknown {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    const field = desc.fields.find((f) => f.jsonName === key || f.name === key);
    out[key] = field && hasFileMarker(v) ? expandField(field, v, read) : v;
    if (!field && hasFileMarker(v)) throw notHere(`${desc.typeName}.${key}`, "not a field of the message");
  }
  return out;
}

function expandField(field: DescField, v: unknown, read: Read): unknown {
  const one = (x: unknown) => expandSingle(field, x, read);
  if (field.fieldKind === "list" && Array.isArray(v)) return v.map(one);
  if (field.fieldKind === "map" && v !== null && typeof v === "object") {
    return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, one(x)]));
  }
  return one(v);
}

function expandSingle(field: DescField, v: unknown, read: Read): unknown {
  // Scalar, list and map fields name their (element or value) type alike.
  const { message, scalar } = field as { message?: DescMessage; scalar?: ScalarType };
  if (message && !message.typeName.startsWith("google.protobuf.")) return expandFileValues(message, v, read);
  if (typeof v !== "string")
    throw notHere(`${field.parent.typeName}.${field.name}`, "not a string or bytes field");
  if (scalar === ScalarType.BYTES) {
    const m = /^@@protocall-file:([^@"\\]*)@@$/.exec(v);
    if (!m) {
      throw new ProtocallError(
        `{{$file}} in the bytes field ${field.parent.typeName}.${field.name} must be the whole value ("${field.jsonName}": "{{$file ./path}}"): the file's bytes are sent as they are`,
      );
    }
    return readFileAt(decodeURIComponent(m[1]), read).toString("base64");
  }
  if (scalar === ScalarType.STRING) {
    return v.replace(markerPattern, (_, path: string) =>
      readFileAt(decodeURIComponent(path), read).toString("utf8"),
    );
  }
  throw notHere(`${field.parent.typeName}.${field.name}`, "not a string or bytes field");
}

function readFileAt(path: string, read: Read): Buffer {
  try {
    return read(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ProtocallError(
      `{{$file}}: cannot read ${path}: ${code === "ENOENT" ? "no such file" : code === "EISDIR" ? "it is a directory" : (code ?? String(err))}; the path is relative to the .rpc file`,
    );
  }
}

function notHere(where: string, why: string): ProtocallError {
  return new ProtocallError(
    `{{$file}} can fill only a string or bytes field, and ${where} is ${why}; put it in one, such as "data": "{{$file ./photo.png}}"`,
  );
}
