// The Services view's drift badge inside the real extension host: the demo server (reflection) added
// as a server source matches the workspace (a copy of examples/); after a field is added to the
// workspace's greet.proto the server's item shows a badge (the count, how many break clients), the
// list on hover, and "Show Drift Report" opens the report; putting the file back clears the badge.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as vscode from "vscode";
import type { ServerDrift } from "../../../src/core/drift/server-drift";
import type { ServicesApi } from "../../../src/extension/services/services-feature";
import type { SourceElement } from "../../../src/extension/services/tree";
import { type VscodeTest, waitFor } from "../harness";

async function services(): Promise<ServicesApi> {
  const ext = vscode.extensions.getExtension("protocall.protocall");
  assert.ok(ext, "the Protocall extension is installed");
  return ((await ext.activate()) as { services: ServicesApi }).services;
}

/** A tooltip's Markdown as plain text (VS Code writes escaped text with &nbsp; and backslashes). */
function plain(md: vscode.MarkdownString): string {
  return md.value
    .replace(/&nbsp;/g, " ")
    .replace(/\\(.)/g, "$1")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");
}

/** The server's item once `predicate` holds for it. */
async function serverItem(
  api: ServicesApi,
  url: string,
  what: string,
  predicate: (item: vscode.TreeItem) => boolean,
): Promise<{ element: SourceElement; item: vscode.TreeItem }> {
  return waitFor(
    what,
    async () => {
      const roots = (await api.provider.getChildren()) ?? [];
      const element = roots.find(
        (e): e is SourceElement => e.type === "source" && e.info.kind === "server" && e.info.origin === url,
      );
      if (!element) return undefined;
      const item = (await api.provider.getTreeItem(element)) as vscode.TreeItem;
      return predicate(item) ? { element, item } : undefined;
    },
    90_000,
  );
}

export const tests: VscodeTest[] = [
  {
    name: "a server that differs from the workspace shows a drift badge, the list on hover, and its report",
    timeoutMs: 240_000,
    async run(env) {
      const api = await services();
      const greet = join(env.workspace, "proto/demo/v1/greet.proto");
      const original = readFileSync(greet, "utf8");
      const hadServer = vscode.workspace
        .getConfiguration("protocall")
        .get<{ url: string }[]>("servers", [])
        .some((s) => s.url === env.demoUrl);
      try {
        env.step("add the demo server; it matches the workspace");
        if (!hadServer)
          await vscode.commands.executeCommand("protocall.services.addServer", { url: env.demoUrl });
        const same = await serverItem(api, env.demoUrl, "the server compared with the workspace", (item) =>
          plain(item.tooltip as vscode.MarkdownString).includes("Matches "),
        );
        assert.equal(same.item.description, "reflection");
        assert.equal(same.item.contextValue, "server");
        assert.match(
          plain(same.item.tooltip as vscode.MarkdownString),
          new RegExp(`Matches ${env.workspace}`),
        );

        env.step("add a field to the workspace's GreetRequest");
        assert.ok(original.includes("  string name = 1;\n"));
        const changed = original.replace("  string name = 1;\n", "  string name = 1;\n  string title = 2;\n");
        writeFileSync(greet, changed);
        const line = changed.split("\n").findIndex((l) => l.includes("title = 2")) + 1;
        const badged = await serverItem(api, env.demoUrl, "the drift badge", (item) =>
          String(item.description).includes("drift"),
        );
        assert.equal(badged.item.description, "reflection · drift: 1 (1 breaking)");
        assert.equal(badged.item.contextValue, "server-drift");
        assert.equal((badged.item.iconPath as vscode.ThemeIcon).id, "warning");
        const tip = plain(badged.item.tooltip as vscode.MarkdownString);
        assert.match(tip, new RegExp(`Differs from ${env.workspace}:`));
        assert.ok(
          tip.includes(
            `proto/demo/v1/greet.proto:${line}: breaking: field demo.v1.GreetRequest.title: in the workspace, not on the server (buf FIELD_NO_DELETE:`,
          ),
          tip,
        );
        assert.notEqual((badged.item.tooltip as vscode.MarkdownString).isTrusted, true);

        env.step("Show Drift Report");
        const shown = await vscode.commands.executeCommand<ServerDrift | undefined>(
          "protocall.services.showDriftReport",
          badged.element,
        );
        assert.ok(shown);
        assert.equal(shown.report.verdict, "breaking");
        assert.deepEqual(
          shown.report.differences.map((d) => d.name),
          ["demo.v1.GreetRequest.title"],
        );
        const text = vscode.window.activeTextEditor?.document.getText() ?? "";
        assert.match(text, new RegExp(`^Drift of ${env.demoUrl.replace(/\./g, "\\.")} from `));
        assert.ok(text.includes("breaking: field demo.v1.GreetRequest.title"), text);
        assert.match(
          text,
          /^1 difference between .*: 1 breaking for clients of the workspace \(buf breaking\), 0 compatible$/m,
        );

        env.step("put the file back; the badge goes");
        writeFileSync(greet, original);
        const back = await serverItem(api, env.demoUrl, "the badge cleared", (item) =>
          plain(item.tooltip as vscode.MarkdownString).includes("Matches "),
        );
        assert.equal(back.item.description, "reflection");
      } finally {
        writeFileSync(greet, original);
        if (!hadServer) {
          const roots = (await api.provider.getChildren()) ?? [];
          const element = roots.find((e) => e.type === "source" && e.info.origin === env.demoUrl);
          if (element) await vscode.commands.executeCommand("protocall.services.removeServer", element);
        }
      }
    },
  },
];
