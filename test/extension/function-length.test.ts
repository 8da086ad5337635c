// No function in src/extension is longer than 150 lines: wiring that grows past a screen is split into
// small named functions (one feature per module, one method per command). Measured with the
// TypeScript compiler's parser: every function declaration, method, accessor, constructor, function
// expression and arrow function, from its first line to its last (nested functions count in their
// parent's length too).
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { test } from "node:test";
import ts from "typescript";
import { repoRoot } from "../support/cli";

const maxLines = 150;
const root = join(repoRoot, "src/extension");

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

/** Every function-like node of a file with its name (or where it starts) and its length in lines. */
function functionLengths(path: string): { name: string; lines: number }[] {
  const source = ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest, true);
  const out: { name: string; lines: number }[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const named = (node as ts.FunctionLikeDeclaration).name;
      const name = named && ts.isIdentifier(named) ? named.text : `function at line ${first + 1}`;
      const where = path.startsWith(repoRoot) ? relative(repoRoot, path) : path;
      out.push({ name: `${where}: ${name} (line ${first + 1})`, lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

test(`no function in src/extension is longer than ${maxLines} lines`, () => {
  const all = files(root).flatMap(functionLengths);
  assert.ok(all.length > 100, `only ${all.length} functions found in ${root}`);
  const long = all.filter((f) => f.lines > maxLines).map((f) => `${f.name}: ${f.lines} lines`);
  assert.deepEqual(long, [], `split these functions:\n${long.join("\n")}`);
});

test("the measure finds a long function and the functions inside it", () => {
  const body = Array.from({ length: maxLines + 5 }, (_, i) => `  const v${i} = ${i};`).join("\n");
  const dir = mkdtempSync(join(tmpdir(), "protocall-function-length-"));
  try {
    const path = join(dir, "long.ts");
    writeFileSync(path, `export function register() {\n${body}\n  return () => {\n    return 1;\n  };\n}\n`);
    const lengths = functionLengths(path);
    assert.equal(lengths.find((f) => f.name.includes("register"))?.lines, maxLines + 10);
    assert.ok(
      lengths.some((f) => f.lines === 3),
      "the nested arrow function too",
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
