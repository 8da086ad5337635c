// Small checks of JSON values against the shapes of our custom LSP messages: each check returns
// undefined when the value fits, or one sentence naming the first field that does not (its path from
// `params`, what it is, what it should be). Hand-written instead of a schema library: the messages are
// few and flat, and the language server's bundle (and start-up) stays free of a validator.

/** A check of a value at `path`: undefined when it fits, else what is wrong. */
export type Check = (value: unknown, path: string) => string | undefined;

function shown(value: unknown): string {
  if (value === undefined) return "missing";
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  const text = JSON.stringify(value);
  return `${typeof value} ${text.length > 40 ? `${text.slice(0, 39)}…` : text}`;
}

export const isString: Check = (v, path) =>
  typeof v === "string" ? undefined : `${path} must be a string, not ${shown(v)}`;

export const isBoolean: Check = (v, path) =>
  typeof v === "boolean" ? undefined : `${path} must be true or false, not ${shown(v)}`;

export function oneOf(...values: readonly string[]): Check {
  return (v, path) =>
    typeof v === "string" && values.includes(v)
      ? undefined
      : `${path} must be one of ${values.map((x) => JSON.stringify(x)).join(", ")}, not ${shown(v)}`;
}

export function arrayOf(item: Check): Check {
  return (v, path) => {
    if (!Array.isArray(v)) return `${path} must be an array, not ${shown(v)}`;
    for (let i = 0; i < v.length; i++) {
      const problem = item(v[i], `${path}[${i}]`);
      if (problem) return problem;
    }
    return undefined;
  };
}

/** Missing (undefined) is fine; otherwise the value must pass `check`. */
export function optional(check: Check): Check {
  return (v, path) => (v === undefined ? undefined : check(v, path));
}

/**
 * An object with these fields (one check per field of `T`, so a field added to the type without a
 * check does not compile). Fields not listed are ignored, so a newer client may send more.
 */
export function objectOf<T>(fields: { [K in keyof T]-?: Check }): Check {
  return (v, path) => {
    if (typeof v !== "object" || v === null || Array.isArray(v)) {
      return `${path} must be an object, not ${shown(v)}`;
    }
    const o = v as Record<string, unknown>;
    for (const [name, check] of Object.entries(fields) as [string, Check][]) {
      const problem = check(o[name], `${path}.${name}`);
      if (problem) return problem;
    }
    return undefined;
  };
}
