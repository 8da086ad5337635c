// The engine's layers, checked on the sources: src/core imports no front end (the language server,
// the CLI, the extension) and neither `vscode` nor the language server library; every folder of
// src/core imports only the folders its row of `allowedImports` names (the schema engine does not
// import the request-file format, the call engine not the assertions, and so on), so the folders
// form layers without cycles; and the CLI takes what `protocall check` needs from the core, not from
// the language server's modules.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, it } from "node:test";
import { repoRoot } from "../support/cli";

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

/** Every module a file imports (static, type-only and dynamic), relative ones as paths from the repository. */
function imports(path: string): string[] {
  const text = readFileSync(path, "utf8");
  const out: string[] = [];
  for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^import\s+)["']([^"']+)["']/gm)) {
    const spec = m[1];
    out.push(spec.startsWith(".") ? relative(repoRoot, resolve(dirname(path), spec)) : spec);
  }
  return out;
}

/** The imports of the files under `dir` that `bad` refuses, as `file: import` lines. */
function offending(dir: string, bad: (spec: string) => boolean): string[] {
  return files(join(repoRoot, dir)).flatMap((f) =>
    imports(f)
      .filter(bad)
      .map((spec) => `${relative(repoRoot, f)}: ${spec}`),
  );
}

/**
 * Which src/core folder may import which ("." is the shared files directly in src/core: errors,
 * closest names, the flag tokenizer, header lines). A folder imports itself freely. A new folder
 * gets a row here; an import not in its row is a layering error.
 */
const allowedImports: Record<string, readonly string[]> = {
  ".": [],
  serve: ["."],
  http2: [],
  schema: ["."],
  invoke: [".", "schema"],
  registry: [".", "schema", "invoke", "rpcfile"],
  rpcfile: [".", "schema", "invoke"],
  assertions: [".", "schema", "invoke", "rpcfile"],
  auth: [".", "invoke", "registry", "webhooks"],
  analysis: [".", "schema", "invoke", "rpcfile", "registry", "assertions", "auth", "load"],
  webhooks: [".", "schema", "invoke", "registry", "serve"],
  "registry-emulator": [".", "schema", "invoke", "registry", "serve", "webhooks"],
  mock: [".", "schema", "invoke", "rpcfile", "assertions", "serve", "analysis"],
  drift: [".", "schema", "invoke", "analysis"],
  load: [".", "schema", "invoke", "rpcfile", "assertions", "http2"],
  proxy: [".", "schema", "invoke", "rpcfile", "serve", "http2"],
  mcp: [".", "schema", "invoke", "rpcfile", "assertions", "analysis"],
};

/** The src/core folder a repository path is in ("." for a file directly in src/core), if any. */
function coreFolder(path: string): string | undefined {
  const m = /^src\/core\/([^/]+)(\/|$)/.exec(path);
  if (!m) return undefined;
  return m[2] === "/" ? m[1] : ".";
}

/** The imports between src/core folders that `allowed` does not permit, as `file: import` lines. */
function layerViolations(allowed: Record<string, readonly string[]>): string[] {
  return files(join(repoRoot, "src/core")).flatMap((f) => {
    const file = relative(repoRoot, f);
    const from = coreFolder(file) as string;
    const row = allowed[from];
    if (!row) return [`${file}: src/core/${from} has no row in allowedImports: add one`];
    return imports(f)
      .filter((spec) => {
        const to = coreFolder(spec);
        return to !== undefined && to !== from && !row.includes(to);
      })
      .map((spec) => `${file}: ${spec} (${from} may import ${row.join(", ") || "nothing"} of src/core)`);
  });
}

describe("layers", () => {
  it("every src/core folder imports only the folders its row allows", () => {
    assert.deepEqual(layerViolations(allowedImports), []);
  });

  it("the table admits no cycle, and the check catches an import outside a row", () => {
    // A cycle: some folder reachable from itself through the table.
    const reach = (from: string, seen = new Set<string>()): Set<string> => {
      for (const to of allowedImports[from] ?? []) {
        if (!seen.has(to)) {
          seen.add(to);
          reach(to, seen);
        }
      }
      return seen;
    };
    for (const folder of Object.keys(allowedImports)) {
      assert.ok(!reach(folder).has(folder), `${folder} can reach itself`);
      for (const to of allowedImports[folder])
        assert.ok(to in allowedImports, `${folder} names unknown ${to}`);
    }
    const without = { ...allowedImports, invoke: ["."] };
    const found = layerViolations(without);
    assert.ok(
      found.some((l) =>
        /^src\/core\/invoke\/.*: src\/core\/schema\/.* \(invoke may import \. of src\/core\)$/.test(l),
      ),
      found.join("\n"),
    );
    const { serve: _, ...noServe } = allowedImports;
    assert.ok(layerViolations(noServe).some((l) => l.includes("src/core/serve has no row")));
  });

  it("src/core imports no front end, no vscode and not the language server library", () => {
    const bad = (s: string) =>
      /^src\/(server|cli|extension)(\/|$)/.test(s) ||
      s === "vscode" ||
      s === "vscode-languageserver" ||
      s.startsWith("vscode-languageserver/");
    assert.deepEqual(offending("src/core", bad), []);
  });

  it("the CLI does not import the language server's modules", () => {
    assert.deepEqual(
      offending("src/cli", (s) => s.startsWith("src/server")),
      [],
    );
  });

  it("finds imports of every form (a check that sees nothing would pass for anything)", () => {
    const all = offending("src/server", (s) => s.startsWith("src/core/analysis"));
    assert.ok(all.some((l) => l.startsWith("src/server/language-server.ts: src/core/analysis/schema-store")));
    const dynamic = offending("src/cli", (s) => s === "src/core/analysis/check-files");
    assert.deepEqual(dynamic, ["src/cli/commands/check.ts: src/core/analysis/check-files"]);
  });
});
