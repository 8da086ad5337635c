// The layers run one way: the registry client builds on schema and invoke (and rpcfile), so none of
// those imports src/core/registry, statically or with import(). What they share with it lives below
// (schema/module-ref.ts, schema/registry-modules.ts); the opener of modules is provided at start.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { test } from "node:test";
import { repoRoot } from "../../support/cli";

const core = join(repoRoot, "src/core");

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

test("schema, invoke and rpcfile import nothing from the registry layer", () => {
  const upward: string[] = [];
  for (const layer of ["schema", "invoke", "rpcfile"]) {
    for (const file of files(join(core, layer))) {
      const text = readFileSync(file, "utf8");
      for (const m of text.matchAll(/(?:from\s+|import\(\s*)"(\.[^"]+)"/g)) {
        const target = relative(core, resolve(dirname(file), m[1]));
        if (target === "registry" || target.startsWith("registry/")) {
          upward.push(`${relative(repoRoot, file)} imports ${m[1]}`);
        }
      }
    }
  }
  assert.deepEqual(upward, []);
});
