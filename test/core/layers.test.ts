// The engine's layers, checked on the sources: src/core imports no front end (the language server,
// the CLI, the extension) and neither `vscode` nor the language server library; the schema engine
// does not import the request-file format (rpcfile uses schema, never the reverse); the call engine
// does not import the assertions (assertions use invoke, never the reverse); and the CLI
// takes what `protocall check` needs from the core, not from the language server's modules.
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

describe("layers", () => {
  it("src/core imports no front end, no vscode and not the language server library", () => {
    const bad = (s: string) =>
      /^src\/(server|cli|extension)(\/|$)/.test(s) ||
      s === "vscode" ||
      s === "vscode-languageserver" ||
      s.startsWith("vscode-languageserver/");
    assert.deepEqual(offending("src/core", bad), []);
  });

  it("the schema engine does not import the request-file format", () => {
    assert.deepEqual(
      offending("src/core/schema", (s) => s.startsWith("src/core/rpcfile")),
      [],
    );
  });

  it("the call engine does not import the assertions (the checked-request runner uses invoke, never the reverse)", () => {
    assert.deepEqual(
      offending("src/core/invoke", (s) => s.startsWith("src/core/assertions")),
      [],
    );
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
