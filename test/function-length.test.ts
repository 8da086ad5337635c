// No function in src (generated src/gen aside) is longer than 150 lines: wiring that grows past a
// screen is split into small named functions (one feature per module, one method per command). A
// function that has to stay longer would be listed with its length (none is now); the list may only
// shrink: a listed function that grows fails, as does one that is split below the limit but still listed. Measured with the
// TypeScript compiler's parser: every function declaration, method, accessor, constructor, function
// expression and arrow function, from its first line to its last (nested functions count in their
// parent's length too).
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { test } from "node:test";
import ts from "typescript";
import { repoRoot } from "./support/cli";

const maxLines = 150;
const root = join(repoRoot, "src");
const generated = join(root, "gen");

/** Functions longer than the limit, keyed "file: name", with the length they may not exceed. */
const allowed: Record<string, number> = {};

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? join(dir, e.name) === generated
        ? []
        : files(join(dir, e.name))
      : e.name.endsWith(".ts")
        ? [join(dir, e.name)]
        : [],
  );
}

interface Measured {
  /** "file: name", the allow-list's key (a function without a name is named by its line). */
  key: string;
  name: string;
  lines: number;
}

/** Every function-like node of a file with its name (or where it starts) and its length in lines. */
function functionLengths(path: string): Measured[] {
  const source = ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest, true);
  const out: Measured[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const named = (node as ts.FunctionLikeDeclaration).name;
      const name = named && ts.isIdentifier(named) ? named.text : `function at line ${first + 1}`;
      const where = path.startsWith(repoRoot) ? relative(repoRoot, path) : path;
      out.push({
        key: `${where}: ${name}`,
        name: `${where}: ${name} (line ${first + 1})`,
        lines: last - first + 1,
      });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

/** What breaks the rule: unlisted long functions, listed ones that grew, and listed ones now short. */
function violations(all: Measured[], allowList: Record<string, number>): string[] {
  const out: string[] = [];
  for (const f of all) {
    if (f.lines <= maxLines) continue;
    const limit = allowList[f.key];
    if (limit === undefined) out.push(`${f.name}: ${f.lines} lines, over ${maxLines}: split it`);
    else if (f.lines > limit)
      out.push(`${f.name}: ${f.lines} lines, grew past its listed ${limit}: split it`);
  }
  for (const [key, limit] of Object.entries(allowList)) {
    const found = all.filter((f) => f.key === key);
    const longest = Math.max(0, ...found.map((f) => f.lines));
    if (longest <= maxLines)
      out.push(`${key}: listed at ${limit} lines but is now ${longest}: remove it from the list`);
    else if (longest < limit)
      out.push(`${key}: listed at ${limit} lines but is now ${longest}: lower the list to it`);
  }
  return out;
}

test(`no function in src is longer than ${maxLines} lines, except the listed ones, which may not grow`, () => {
  const all = files(root).flatMap(functionLengths);
  assert.ok(all.length > 1000, `only ${all.length} functions found in ${root}`);
  assert.ok(!all.some((f) => f.key.startsWith("src/gen/")), "generated code is not measured");
  const wrong = violations(all, allowed);
  assert.deepEqual(wrong, [], wrong.join("\n"));
});

test("the allow-list rejects an unlisted long function, a grown one and a stale entry", () => {
  const long = (key: string, lines: number): Measured => ({ key, name: key, lines });
  const all = [long("a.ts: f", maxLines + 1), long("b.ts: g", 200), long("c.ts: h", 10)];
  const wrong = violations(all, { "b.ts: g": 199, "c.ts: h": 300, "d.ts: gone": 400 });
  assert.equal(wrong.length, 4, wrong.join("\n"));
  assert.match(wrong[0], /^a\.ts: f: 151 lines, over 150/);
  assert.match(wrong[1], /grew past its listed 199/);
  assert.match(wrong[2], /^c\.ts: h: .*remove it/);
  assert.match(wrong[3], /^d\.ts: gone: .*remove it/);
  assert.deepEqual(violations(all.slice(1), { "b.ts: g": 200 }), []);
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
