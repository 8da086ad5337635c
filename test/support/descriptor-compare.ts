// Compares decoded Protobuf messages as values: own properties, prototype (zero) values, bytes.

/**
 * Compares two decoded values: same own properties with equal values, same prototype values (the
 * zero values of unset fields), bytes by content. Returns the first difference, or undefined.
 */
export function difference(a: unknown, b: unknown, path = "$"): string | undefined {
  if (typeof a !== typeof b) return `${path}: ${typeof a} vs ${typeof b}`;
  if (a instanceof Uint8Array || b instanceof Uint8Array) {
    if (!(a instanceof Uint8Array && b instanceof Uint8Array)) return `${path}: bytes vs not bytes`;
    return Buffer.from(a).equals(Buffer.from(b)) ? undefined : `${path}: bytes differ`;
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!(Array.isArray(a) && Array.isArray(b))) return `${path}: array vs not array`;
    if (a.length !== b.length) return `${path}: length ${a.length} vs ${b.length}`;
    for (let i = 0; i < a.length; i++) {
      const d = difference(a[i], b[i], `${path}[${i}]`);
      if (d) return d;
    }
    return undefined;
  }
  if (a === null || b === null || typeof a !== "object") {
    return Object.is(a, b) ? undefined : `${path}: ${String(a)} vs ${String(b)}`;
  }
  const keysA = Object.keys(a).sort();
  const keysB = Object.keys(b as object).sort();
  if (keysA.join() !== keysB.join()) return `${path}: own properties [${keysA}] vs [${keysB}]`;
  for (const k of keysA) {
    const d = difference(
      (a as Record<string, unknown>)[k],
      (b as Record<string, unknown>)[k],
      `${path}.${k}`,
    );
    if (d) return d;
  }
  const protoA = Object.getPrototypeOf(a);
  const protoB = Object.getPrototypeOf(b);
  if ((protoA === Object.prototype) !== (protoB === Object.prototype))
    return `${path}: prototype kind differs`;
  if (protoA !== Object.prototype) return difference(protoA, protoB, `${path}.<prototype>`);
  return undefined;
}
