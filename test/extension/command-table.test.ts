// The command table (src/extension/command-table.ts) against the manifest: the same ids as
// package.json's contributes.commands, each once; every command a menu, key binding, view welcome or
// the language server's code lenses name is in it; and no source file outside the table (and the
// language server's protocol.ts, whose two ids the table reuses) writes a command id as a string.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, test } from "node:test";
import ts from "typescript";
import { commandIds, commandTable } from "../../src/extension/command-table";
import { copyAsCurlCommand, sendCommand } from "../../src/server/protocol";
import { repoRoot } from "../support/cli";

interface Manifest {
  contributes: {
    commands: { command: string; title: string }[];
    menus: Record<string, { command: string }[]>;
    keybindings: { command: string }[];
    viewsWelcome: { contents: string }[];
  };
}

const manifest = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as Manifest;
const tableIds = commandTable.map((c) => c.id);
const manifestIds = manifest.contributes.commands.map((c) => c.command);

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

/** The string literals of a source (code only: comments are not literals) that are command ids. */
function bareCommandIds(path: string, text: string, ids: ReadonlySet<string>): string[] {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const visit = (node: ts.Node) => {
    if ((ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) && ids.has(node.text)) {
      const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
      out.push(`${path}:${line}: "${node.text}"`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

describe("the command table", () => {
  test("no command id is written as a string outside the table: code takes it from commandIds", () => {
    const ids = new Set<string>(tableIds);
    const owners = new Set(["src/extension/command-table.ts", "src/server/protocol.ts"]);
    const found = ["src/extension", "src/server"]
      .flatMap((dir) => sources(join(repoRoot, dir)))
      .map((path) => relative(repoRoot, path))
      .filter((path) => !owners.has(path))
      .flatMap((path) => bareCommandIds(path, readFileSync(join(repoRoot, path), "utf8"), ids));
    assert.deepEqual(found, [], "use commandIds from src/extension/command-table.ts");
  });

  test("the scan finds a bare id in code, not in a comment", () => {
    const ids = new Set<string>([commandIds.showOutput]);
    const text = '// runs "protocall.showOutput"\nconst c = { command: "protocall.showOutput" };\n';
    assert.deepEqual(bareCommandIds("a.ts", text, ids), ['a.ts:2: "protocall.showOutput"']);
    assert.deepEqual(Object.values(commandIds).sort(), [...tableIds].sort(), "one constant per command");
  });

  test("lists every command of package.json, and only those", () => {
    assert.deepEqual([...tableIds].sort(), [...manifestIds].sort());
  });

  test("lists each command once, as package.json does", () => {
    assert.equal(new Set(tableIds).size, tableIds.length, "a duplicate id in the table");
    assert.equal(new Set(manifestIds).size, manifestIds.length, "a duplicate id in package.json");
  });

  test("every id is protocall.* and every entry has a handler", () => {
    for (const c of commandTable) {
      assert.match(c.id, /^protocall\.[A-Za-z.]+$/);
      assert.equal(typeof c.run, "function", c.id);
    }
  });

  test("menus, key bindings, welcome views and code lenses name commands of the table", () => {
    const known = new Set<string>(tableIds);
    const used = [
      ...Object.values(manifest.contributes.menus).flatMap((items) => items.map((i) => i.command)),
      ...manifest.contributes.keybindings.map((k) => k.command),
      ...manifest.contributes.viewsWelcome.flatMap((w) =>
        [...w.contents.matchAll(/\(command:([\w.]+)\)/g)].map((m) => m[1]),
      ),
      sendCommand,
      copyAsCurlCommand,
    ];
    for (const id of used) assert.ok(known.has(id), `${id} is used but not in the command table`);
  });

  test("Paste as Request is a command of the palette", () => {
    const paste = manifest.contributes.commands.find((c) => c.command === "protocall.pasteAsRequest");
    assert.equal(paste?.title, "Paste as Request");
    const hidden = manifest.contributes.menus.commandPalette.find(
      (m) => m.command === "protocall.pasteAsRequest",
    );
    assert.equal(hidden, undefined, "not hidden from the palette");
  });
});
