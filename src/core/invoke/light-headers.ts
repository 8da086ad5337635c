// A small implementation of the Fetch API's Headers class, for the command line.
//
// Why: on Node 20 the global `Headers` is created lazily by loading Node's whole fetch implementation
// (undici), which costs about 30 ms — half of Node's own start-up time — while `protocall curl` only
// needs a header map for the Connect transports. `protocall curl` must start nearly as fast as the
// native `buf curl`, so the CLI installs this class as the global before any Headers is created.
// It follows the Fetch standard's observable behaviour: case-insensitive names, values trimmed,
// `get` joins repeated values with ", ", iteration sorted by lower-case name (Set-Cookie values kept
// apart), and `getSetCookie`.

const INVALID_NAME = /[^!#$%&'*+\-.^_`|~0-9A-Za-z]/;
const INVALID_VALUE = /[\0\r\n]/;

function normalizeName(name: string): string {
  const n = String(name);
  if (n === "" || INVALID_NAME.test(n)) throw new TypeError(`Headers: invalid header name "${n}"`);
  return n.toLowerCase();
}

function normalizeValue(value: string): string {
  const v = String(value).replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, "");
  if (INVALID_VALUE.test(v)) throw new TypeError(`Headers: invalid header value "${v}"`);
  return v;
}

type Init = Headers | [string, string][] | Record<string, string> | Iterable<readonly [string, string]>;

export class LightHeaders {
  private readonly map = new Map<string, string[]>();

  constructor(init?: Init) {
    if (init === undefined || init === null) return;
    if (typeof (init as Iterable<unknown>)[Symbol.iterator] === "function") {
      for (const pair of init as Iterable<readonly [string, string]>) {
        if (pair.length !== 2) throw new TypeError("Headers: each header must be a [name, value] pair");
        this.append(pair[0], pair[1]);
      }
    } else {
      for (const name of Object.keys(init)) this.append(name, (init as Record<string, string>)[name]);
    }
  }

  append(name: string, value: string): void {
    const n = normalizeName(name);
    const v = normalizeValue(value);
    const values = this.map.get(n);
    if (values) values.push(v);
    else this.map.set(n, [v]);
  }

  set(name: string, value: string): void {
    this.map.set(normalizeName(name), [normalizeValue(value)]);
  }

  delete(name: string): void {
    this.map.delete(normalizeName(name));
  }

  get(name: string): string | null {
    const values = this.map.get(normalizeName(name));
    return values ? values.join(", ") : null;
  }

  getSetCookie(): string[] {
    return [...(this.map.get("set-cookie") ?? [])];
  }

  has(name: string): boolean {
    return this.map.has(normalizeName(name));
  }

  forEach(callback: (value: string, name: string, parent: LightHeaders) => void, thisArg?: unknown): void {
    for (const [name, value] of this.entries()) callback.call(thisArg, value, name, this);
  }

  *entries(): IterableIterator<[string, string]> {
    const names = [...this.map.keys()].sort();
    for (const name of names) {
      const values = this.map.get(name) ?? [];
      if (name === "set-cookie") {
        for (const v of values) yield [name, v];
      } else {
        yield [name, values.join(", ")];
      }
    }
  }

  *keys(): IterableIterator<string> {
    for (const [name] of this.entries()) yield name;
  }

  *values(): IterableIterator<string> {
    for (const [, value] of this.entries()) yield value;
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }

  get [Symbol.toStringTag](): string {
    return "Headers";
  }
}

/** Whether Node's fetch implementation (undici, which its own Headers comes from) is loaded. */
function nodeHeadersLoaded(): boolean {
  const list = (process as { moduleLoadList?: readonly string[] }).moduleLoadList;
  return list?.includes("NativeModule internal/deps/undici/undici") ?? true;
}

/**
 * Installs LightHeaders as the global `Headers` when Node has not created its own yet (undici is not
 * loaded). Returns whether it was installed. Node 20 defines that global as a lazy accessor; Node 22
 * and later as a lazy data property that loads undici (and with it tls, crypto, http2 and zlib) as
 * soon as its descriptor is read or it is redefined, but not when it is deleted: so it is deleted,
 * then defined, on every line.
 */
export function installLightHeaders(): boolean {
  if (nodeHeadersLoaded()) return false;
  if (!Reflect.deleteProperty(globalThis, "Headers")) return false;
  Object.defineProperty(globalThis, "Headers", {
    value: LightHeaders,
    writable: true,
    configurable: true,
    enumerable: false,
  });
  return true;
}
