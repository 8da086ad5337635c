// Fields of a response that the message types do not declare. Some are extensions (printed as
// "[pkg.ext]" once the schema defines them); the rest are dropped from the JSON output, and verbose
// mode says how many bytes that was, as `buf curl -v` does.
import type { DescMessage, Message, UnknownField } from "@bufbuild/protobuf";

/** An undeclared field found in a message of type `extendee`. */
export interface FoundUnknownField {
  extendee: DescMessage;
  field: UnknownField;
}

const extendableCache = new WeakMap<DescMessage, boolean>();

/** Whether a message of this type can hold extension fields anywhere inside it. */
export function reachesExtendable(desc: DescMessage, seen = new Set<DescMessage>()): boolean {
  const cached = extendableCache.get(desc);
  if (cached !== undefined) return cached;
  if (seen.has(desc)) return false;
  seen.add(desc);
  let result = desc.proto.extensionRange.length > 0;
  for (const f of desc.fields) {
    if (result) break;
    if (f.message && reachesExtendable(f.message, seen)) result = true;
  }
  if (seen.size === 1 || result) extendableCache.set(desc, result);
  return result;
}

/** Every undeclared field of a message and of the messages inside it (not inside Any values). */
export function findUnknownFields(
  desc: DescMessage,
  message: Message,
  out: FoundUnknownField[] = [],
): FoundUnknownField[] {
  const unknown = (message as { $unknown?: UnknownField[] }).$unknown;
  if (unknown) for (const field of unknown) out.push({ extendee: desc, field });
  const record = message as unknown as Record<string, unknown>;
  for (const f of desc.fields) {
    const m = f.message;
    if (!m || m.typeName === "google.protobuf.Any") continue;
    let value: unknown;
    if (f.oneof) {
      const o = record[f.oneof.localName] as { case?: string; value?: unknown };
      if (o.case !== f.localName) continue;
      value = o.value;
    } else {
      value = record[f.localName];
    }
    if (value === undefined) continue;
    if (f.fieldKind === "list") {
      for (const v of value as unknown[]) if (isMessage(v)) findUnknownFields(m, v, out);
    } else if (f.fieldKind === "map") {
      for (const v of Object.values(value as Record<string, unknown>))
        if (isMessage(v)) findUnknownFields(m, v, out);
    } else if (isMessage(value)) {
      findUnknownFields(m, value, out);
    }
  }
  return out;
}

/** The bytes an undeclared field took on the wire: its tag and its data. */
export function unknownFieldSize(field: UnknownField): number {
  let tag = ((field.no << 3) | field.wireType) >>> 0;
  let size = 1;
  while (tag >= 0x80) {
    tag >>>= 7;
    size++;
  }
  return size + field.data.length;
}

function isMessage(value: unknown): value is Message {
  // protobuf-es keeps wrapper and Struct fields as plain values; they have no undeclared fields.
  return typeof value === "object" && value !== null && "$typeName" in value;
}
