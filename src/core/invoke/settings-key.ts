// Cache keys made from the settings objects themselves. A transport, a reflection source or a
// resolver is created from one plain settings object; its key is that object serialized with sorted
// keys (undefined members left out), so whatever shapes the thing is in its key and no list of key
// fields can fall behind the settings.

/** A stable serialization of a plain value: the same settings give the same key, in any key order. */
export function settingsKey(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== "object" || Array.isArray(v)) return v;
    const sorted: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) {
      const member = (v as Record<string, unknown>)[k];
      if (member !== undefined && typeof member !== "function") sorted[k] = member;
    }
    return sorted;
  });
}
