// A header name given more than once (`-H 'x-a: 1' -H 'x-a: 2'`) is sent as separate header fields,
// as buf sends it, although the Fetch API's Headers (which the Connect transports use) joins the
// values into one ("1, 2") on the way. This remembers the values of each repeated name, so the
// HTTP clients can split a joined value back into its fields.

/** Returns the separate values behind a joined header value, or undefined to send it as it is. */
export type HeaderSplitter = (name: string, value: string) => string[] | undefined;

/** A splitter for the repeated names of these header lists (request and reflection headers). */
export function headerSplitter(...lists: (readonly (readonly [string, string])[])[]): HeaderSplitter {
  const repeated = new Map<string, string[][]>();
  for (const list of lists) {
    const byName = new Map<string, string[]>();
    for (const [name, value] of list) {
      const key = name.toLowerCase();
      let values = byName.get(key);
      if (!values) byName.set(key, (values = []));
      // Headers trims values the same way when they are appended.
      values.push(value.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, ""));
    }
    for (const [key, values] of byName) {
      if (values.length < 2) continue;
      let candidates = repeated.get(key);
      if (!candidates) repeated.set(key, (candidates = []));
      candidates.push(values);
    }
  }
  if (repeated.size === 0) return () => undefined;
  return (name, value) => {
    const candidates = repeated.get(name.toLowerCase());
    return candidates?.find((values) => values.join(", ") === value);
  };
}

/** Replaces joined values of Node.js outgoing headers with arrays (one header field each). */
export function splitNodeHeaders(
  headers: Record<string, string | string[] | number | undefined>,
  split: HeaderSplitter | undefined,
): void {
  if (!split) return;
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (typeof value !== "string") continue;
    const values = split(name, value);
    if (values) headers[name] = values;
  }
}
