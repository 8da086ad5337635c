import assert from "node:assert/strict";
import { test } from "node:test";
import { LightHeaders } from "../../../src/core/invoke/light-headers";

type AnyHeaders = {
  append(n: string, v: string): void;
  set(n: string, v: string): void;
  delete(n: string): void;
  get(n: string): string | null;
  has(n: string): boolean;
  getSetCookie(): string[];
  forEach(cb: (v: string, n: string) => void): void;
  [Symbol.iterator](): Iterator<[string, string]>;
};

function exercise(h: AnyHeaders) {
  h.append("X-B", " two ");
  h.append("x-b", "three");
  h.append("Set-Cookie", "a=1");
  h.append("set-cookie", "b=2");
  h.set("Content-Type", "application/proto");
  h.append("x-a", "one");
  h.append("x-gone", "x");
  h.delete("X-Gone");
  const seen: string[] = [];
  h.forEach((v, n) => {
    seen.push(`${n}=${v}`);
  });
  return {
    get: [h.get("x-b"), h.get("X-A"), h.get("set-cookie"), h.get("missing")],
    has: [h.has("CONTENT-TYPE"), h.has("x-gone")],
    cookies: h.getSetCookie(),
    seen,
    entries: [...(h as unknown as Iterable<[string, string]>)],
  };
}

test("behaves like the Fetch API's Headers", () => {
  assert.deepEqual(exercise(new LightHeaders() as AnyHeaders), exercise(new Headers() as AnyHeaders));
});

test("accepts the same initializers", () => {
  const inits: unknown[] = [
    [
      ["A", "1"],
      ["a", "2"],
    ],
    { B: "x", c: "y" },
    new Headers([["d", "4"]]),
  ];
  for (const init of inits) {
    assert.deepEqual([...new LightHeaders(init as never)], [...new Headers(init as never)]);
  }
});

test("rejects invalid names and values", () => {
  assert.throws(() => new LightHeaders().append("bad name", "x"), TypeError);
  assert.throws(() => new LightHeaders().append("x", "a\nb"), TypeError);
});

/** Runs `code` in a fresh Node (the line running the tests) with the module as `m`; returns stdout. */
async function inFreshNode(code: string): Promise<string> {
  const { execFile } = await import("node:child_process");
  const { join } = await import("node:path");
  const module = join(__dirname, "../../../src/core/invoke/light-headers.ts");
  return new Promise((resolve, reject) =>
    execFile(
      process.execPath,
      ["--import", "tsx", "-e", `const m = require(${JSON.stringify(module)});\n${code}`],
      (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout)),
    ),
  );
}

const undiciLoaded = `process.moduleLoadList.includes("NativeModule internal/deps/undici/undici")`;

test("installLightHeaders replaces the global Headers without loading Node's fetch implementation, on this Node line", async () => {
  const out = await inFreshNode(
    `const installed = m.installLightHeaders();
     console.log(JSON.stringify({ installed, light: new Headers() instanceof m.LightHeaders, undici: ${undiciLoaded}, enumerable: Object.keys(globalThis).includes("Headers") }));`,
  );
  assert.deepEqual(JSON.parse(out), { installed: true, light: true, undici: false, enumerable: false });
});

test("installLightHeaders keeps Node's Headers once it exists", async () => {
  const out = await inFreshNode(
    `const before = new Headers();
     const installed = m.installLightHeaders();
     console.log(JSON.stringify({ installed, same: new Headers().constructor === before.constructor }));`,
  );
  assert.deepEqual(JSON.parse(out), { installed: false, same: true });
});
