// The Services view in a restricted (untrusted) workspace: a node says why nothing is built and
// offers to trust the workspace; a server is added to the user settings (VS Code ignores the
// workspace's value there) and reflected only when its node is expanded.
import assert from "node:assert/strict";
import * as vscode from "vscode";
import type { ServicesApi } from "../../../src/extension/services/services-feature";
import type { ServicesElement, SourceElement } from "../../../src/extension/services/tree";
import { type VscodeTest, waitFor } from "../harness";

/** This suite runs in a code-server whose workspace is not trusted. */
export const workspaceTrust = false;

async function services(): Promise<ServicesApi> {
  const ext = vscode.extensions.getExtension("protocall.protocall");
  assert.ok(ext, "the Protocall extension is installed");
  return ((await ext.activate()) as { services: ServicesApi }).services;
}

function label(api: ServicesApi, e: ServicesElement): string {
  const l = (api.provider.getTreeItem(e) as vscode.TreeItem).label;
  return typeof l === "string" ? l : (l?.label ?? "");
}

export const tests: VscodeTest[] = [
  {
    name: "the view says the workspace is restricted, offers to trust it, and builds nothing",
    timeoutMs: 60_000,
    async run() {
      assert.equal(vscode.workspace.isTrusted, false);
      const api = await services();
      const roots = (await api.provider.getChildren()) ?? [];
      assert.equal(roots[0]?.type, "restricted");
      const item = api.provider.getTreeItem(roots[0]) as vscode.TreeItem;
      assert.match(label(api, roots[0]), /Restricted Mode/);
      assert.equal(item.command?.command, "workbench.trust.manage");
      assert.ok(!roots.some((e) => e.type === "source" && e.info.kind === "workspace-build"));
    },
  },
  {
    name: "a server is reflected only when its node is expanded",
    timeoutMs: 60_000,
    async run(env) {
      const api = await services();
      await vscode.commands.executeCommand("protocall.services.addServer", { url: env.demoUrl });
      assert.ok(
        vscode.workspace
          .getConfiguration("protocall")
          .inspect<{ url: string }[]>("servers")
          ?.globalValue?.some((s) => s.url === env.demoUrl),
      );
      const server = await waitFor(
        "the server in the view",
        async () =>
          ((await api.provider.getChildren()) ?? []).find(
            (e): e is SourceElement => e.type === "source" && e.info.origin === env.demoUrl,
          ),
        30_000,
      );
      const item = api.provider.getTreeItem(server) as vscode.TreeItem;
      assert.equal(item.collapsibleState, vscode.TreeItemCollapsibleState.Collapsed);
      // Expanding it (VS Code then asks for its children) reflects it.
      const packages = (await api.provider.getChildren(server)) ?? [];
      assert.ok(
        packages.some((p) => label(api, p) === "demo.v1"),
        JSON.stringify(packages.map((p) => label(api, p))),
      );
      assert.equal(await vscode.commands.executeCommand("protocall.services.removeServer", server), true);
    },
  },
];
