// The command table (src/extension/command-table.ts) against the manifest: the same ids as
// package.json's contributes.commands, each once; every command a menu, key binding, view welcome or
// the language server's code lenses name is in it.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { commandTable } from "../../src/extension/command-table";
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

describe("the command table", () => {
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
    const known = new Set(tableIds);
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
