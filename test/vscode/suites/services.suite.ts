// The Services view inside the real extension host, through the view's own tree provider (the API
// activate() returns as `services`) and the view's commands: the workspace build of examples/, a
// server added with "Add server…" and read with reflection, an unreachable server as an error node,
// a click on a method appending a request (to the active .rpc editor, else a new untitled one), go to
// definition, copy name, refresh, remove server, a registry module added with "Add Registry Module…".
import assert from "node:assert/strict";
import { join } from "node:path";
import * as vscode from "vscode";
import type { ServicesApi } from "../../../src/extension/services/services-feature";
import type { NodeElement, ServicesElement, SourceElement } from "../../../src/extension/services/tree";
import { type VscodeTest, waitFor } from "../harness";

async function services(): Promise<ServicesApi> {
  const ext = vscode.extensions.getExtension("protocall.protocall");
  assert.ok(ext, "the Protocall extension is installed");
  return ((await ext.activate()) as { services: ServicesApi }).services;
}

async function children(api: ServicesApi, element?: ServicesElement): Promise<ServicesElement[]> {
  return (await api.provider.getChildren(element)) ?? [];
}

function label(api: ServicesApi, e: ServicesElement): string {
  const l = (api.provider.getTreeItem(e) as vscode.TreeItem).label;
  return typeof l === "string" ? l : (l?.label ?? "");
}

async function child(
  api: ServicesApi,
  parent: ServicesElement | undefined,
  name: string,
): Promise<ServicesElement> {
  const list = await children(api, parent);
  const found = list.find((e) => label(api, e) === name);
  assert.ok(found, `"${name}" in ${JSON.stringify(list.map((e) => label(api, e)))}`);
  return found;
}

/** The sources of the view, waiting until `predicate` holds (the build and settings settle). */
async function sources(
  api: ServicesApi,
  predicate: (s: SourceElement[]) => boolean,
): Promise<SourceElement[]> {
  return waitFor(
    "the Services view's sources",
    async () => {
      const list = (await children(api)).filter((e): e is SourceElement => e.type === "source");
      return predicate(list) ? list : undefined;
    },
    60_000,
  );
}

/** A method element: source → package → service → method. */
async function method(
  api: ServicesApi,
  source: ServicesElement,
  service: string,
  name: string,
): Promise<NodeElement> {
  const pkg = await child(api, source, "demo.v1");
  const svc = await child(api, pkg, service);
  const m = await child(api, svc, name);
  assert.equal(m.type, "node");
  return m as NodeElement;
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

function servers(): { url: string }[] {
  return vscode.workspace.getConfiguration("protocall").get<{ url: string }[]>("servers", []);
}

export const tests: VscodeTest[] = [
  {
    name: "lists the workspace build's demo services, with streaming icons and comment tooltips",
    timeoutMs: 90_000,
    async run(env) {
      const api = await services();
      const list = await sources(api, (s) => s.some((x) => x.info.kind === "workspace-build"));
      const build = list.find((s) => s.info.kind === "workspace-build") as SourceElement;
      assert.equal(build.info.origin, env.workspace);
      assert.equal(build.info.error, undefined);
      const pkg = await child(api, build, "demo.v1");
      const pkgItem = api.provider.getTreeItem(pkg) as vscode.TreeItem;
      assert.equal(pkgItem.collapsibleState, vscode.TreeItemCollapsibleState.Expanded);
      const names = (await children(api, pkg)).map((e) => label(api, e));
      assert.deepEqual(names, ["DemoService", "GreetService"]);
      const svc = await child(api, pkg, "DemoService");
      assert.equal((api.provider.getTreeItem(svc) as vscode.TreeItem).contextValue, "service");
      const icons: Record<string, string> = {};
      for (const m of await children(api, svc)) {
        const item = api.provider.getTreeItem(m) as vscode.TreeItem;
        assert.equal(item.contextValue, "method");
        icons[label(api, m)] = (item.iconPath as vscode.ThemeIcon).id;
      }
      assert.equal(icons.Echo, "arrow-right");
      assert.equal(icons.Count, "arrow-down");
      assert.equal(icons.Sum, "arrow-up");
      assert.equal(icons.Chat, "arrow-swap");
      const greet = await method(api, build, "GreetService", "Greet");
      const item = api.provider.getTreeItem(greet) as vscode.TreeItem;
      const tip = item.tooltip as vscode.MarkdownString;
      assert.match(plain(tip), /rpc Greet\(demo\.v1\.GreetRequest\) returns \(demo\.v1\.GreetResponse\)/);
      assert.match(plain(tip), /Greet answers with a greeting for the given name/);
      assert.notEqual(tip.isTrusted, true);
      assert.equal(item.command?.command, "protocall.services.addRequest");
    },
  },
  {
    name: "Add server saves a valid URL to the workspace settings and lists its services from reflection",
    timeoutMs: 90_000,
    async run(env) {
      const api = await services();
      const refused = await vscode.commands.executeCommand("protocall.services.addServer", {
        url: "localhost:1",
      });
      assert.equal(refused, undefined);
      assert.ok(!servers().some((s) => s.url === "localhost:1"));
      await vscode.commands.executeCommand("protocall.services.addServer", { url: `${env.demoUrl}/` });
      assert.ok(
        vscode.workspace
          .getConfiguration("protocall")
          .inspect<{ url: string }[]>("servers")
          ?.workspaceValue?.some((s) => s.url === env.demoUrl),
      );
      const list = await sources(api, (s) =>
        s.some((x) => x.info.kind === "server" && x.info.origin === env.demoUrl),
      );
      const server = list.find((s) => s.info.origin === env.demoUrl) as SourceElement;
      const item = api.provider.getTreeItem(server) as vscode.TreeItem;
      assert.equal(item.contextValue, "server");
      assert.equal(item.collapsibleState, vscode.TreeItemCollapsibleState.Expanded);
      const pkg = await child(api, server, "demo.v1");
      assert.deepEqual(
        (await children(api, pkg)).map((e) => label(api, e)),
        ["DemoService", "GreetService"],
      );
      const count = await method(api, server, "DemoService", "Count");
      assert.equal(
        ((api.provider.getTreeItem(count) as vscode.TreeItem).iconPath as vscode.ThemeIcon).id,
        "arrow-down",
      );
    },
  },
  {
    name: "clicking a method appends a request to the active .rpc editor, cursor in the body",
    timeoutMs: 60_000,
    async run(env) {
      const api = await services();
      const build = (await sources(api, (s) => s.some((x) => x.info.kind === "workspace-build"))).find(
        (s) => s.info.kind === "workspace-build",
      ) as SourceElement;
      const greet = await method(api, build, "GreetService", "Greet");
      const doc = await vscode.workspace.openTextDocument(
        vscode.Uri.file(join(env.workspace, "requests/demo.rpc")),
      );
      const editor = await vscode.window.showTextDocument(doc);
      const before = doc.getText();
      const command = (api.provider.getTreeItem(greet) as vscode.TreeItem).command as vscode.Command;
      await vscode.commands.executeCommand(command.command, ...(command.arguments ?? []));
      const after = doc.getText();
      assert.ok(after.startsWith(before), "the existing requests are kept");
      const added = after.slice(before.length);
      assert.match(
        added,
        /^\n*### Greet\n# Greet answers with a greeting for the given name\.\n\{\{host\}\}\/demo\.v1\.GreetService\/Greet\n\n\{\n {2}"name": ""\n\}\n$/,
      );
      // demo.rpc defines @host already: not defined again.
      assert.equal(after.match(/^@host = /gm)?.length, 1);
      const cursor = editor.selection.active;
      assert.equal(doc.lineAt(cursor.line).text, '  "name": ""');
      assert.equal(cursor.character, '  "name": "'.length);
      await vscode.commands.executeCommand("workbench.action.files.revert");
    },
  },
  {
    name: "with no .rpc editor, a server's method opens a new untitled .rpc document with its URL",
    timeoutMs: 60_000,
    async run(env) {
      const api = await services();
      await vscode.commands.executeCommand("workbench.action.closeAllEditors");
      const server = (await sources(api, (s) => s.some((x) => x.info.origin === env.demoUrl))).find(
        (s) => s.info.origin === env.demoUrl,
      ) as SourceElement;
      const count = await method(api, server, "DemoService", "Count");
      const added = await api.addRequest(count);
      assert.ok(added);
      const editor = vscode.window.activeTextEditor;
      assert.ok(editor);
      assert.equal(editor.document.uri.scheme, "untitled");
      assert.equal(editor.document.languageId, "rpc");
      const text = editor.document.getText();
      assert.match(text, /^### Count\n/);
      assert.ok(text.includes(`\n${env.demoUrl}/demo.v1.DemoService/Count\n`), text);
      assert.ok(!text.includes("{{host}}"));
      assert.equal(added.line, 0);
      await vscode.commands.executeCommand("workbench.action.revertAndCloseActiveEditor");
    },
  },
  {
    name: "Go to Definition opens the .proto file at the method's name; Copy Full Name copies it",
    timeoutMs: 60_000,
    async run(env) {
      const api = await services();
      const build = (await sources(api, (s) => s.some((x) => x.info.kind === "workspace-build"))).find(
        (s) => s.info.kind === "workspace-build",
      ) as SourceElement;
      const count = await method(api, build, "DemoService", "Count");
      await vscode.commands.executeCommand("protocall.services.goToDefinition", count);
      const editor = vscode.window.activeTextEditor;
      assert.ok(editor);
      assert.equal(editor.document.uri.fsPath, join(env.workspace, "proto/demo/v1/demo.proto"));
      assert.equal(editor.document.getText(editor.selection), "Count");
      assert.match(editor.document.lineAt(editor.selection.start.line).text, /rpc Count\(/);
      // The command returns what it put on the clipboard; a browser-hosted editor may not answer a
      // clipboard read without page focus, so it is checked only if it does.
      const copied = await vscode.commands.executeCommand("protocall.services.copyName", count);
      assert.equal(copied, "demo.v1.DemoService.Count");
      const clip = await Promise.race([
        vscode.env.clipboard.readText(),
        new Promise<undefined>((r) => setTimeout(() => r(undefined), 2000)),
      ]);
      if (clip !== undefined && clip !== "") assert.equal(clip, copied);
    },
  },
  {
    name: "an unreachable server shows an error node that says how to fix it; Remove Server removes it",
    timeoutMs: 60_000,
    async run() {
      const api = await services();
      const dead = "http://127.0.0.1:9";
      await vscode.commands.executeCommand("protocall.services.addServer", { url: dead });
      const server = (await sources(api, (s) => s.some((x) => x.info.origin === dead))).find(
        (s) => s.info.origin === dead,
      ) as SourceElement;
      const [error] = await children(api, server);
      assert.equal(error.type, "error");
      const item = api.provider.getTreeItem(error) as vscode.TreeItem;
      assert.match(String(label(api, error)), /reflection at http:\/\/127\.0\.0\.1:9/);
      assert.match(plain(item.tooltip as vscode.MarkdownString), /Check that the server is running/);
      assert.equal(item.command?.command, "workbench.action.openSettings");
      assert.equal(await vscode.commands.executeCommand("protocall.services.removeServer", server), true);
      assert.ok(!servers().some((s) => s.url === dead));
      await sources(api, (s) => !s.some((x) => x.info.origin === dead));
    },
  },
  {
    name: "Add Registry Module adds REMOTE/owner/module to protocall.schemas; the view shows what the registry said",
    timeoutMs: 60_000,
    async run() {
      const api = await services();
      assert.equal(
        await vscode.commands.executeCommand("protocall.services.addRegistryModule", "acme/weather"),
        undefined,
        "a value without a registry is refused",
      );
      const spec = "localhost:1/acme/weather:v1";
      assert.equal(await vscode.commands.executeCommand("protocall.services.addRegistryModule", spec), spec);
      const config = () => vscode.workspace.getConfiguration("protocall");
      assert.ok(config().inspect<string[]>("schemas")?.workspaceValue?.includes(spec));
      try {
        const list = await sources(api, (s) => s.some((x) => x.info.origin === spec && x.info.error));
        const source = list.find((x) => x.info.origin === spec) as SourceElement;
        assert.equal(source.info.kind, "setting");
        assert.match(
          source.info.error ?? "",
          /the server hosted at that remote is unavailable \(https:\/\/localhost:1/,
        );
      } finally {
        await config().update("schemas", undefined, vscode.ConfigurationTarget.Workspace);
      }
    },
  },
  {
    name: "comments are shown as text in tooltips: no HTML, no links, not trusted",
    timeoutMs: 90_000,
    async run(env) {
      const api = await services();
      const file = vscode.Uri.file(join(env.workspace, "proto/zz/v1/hostile.proto"));
      const hostile = "<img src=x onerror=alert(1)> **bold** [run](command:workbench.action.quit)";
      await vscode.workspace.fs.writeFile(
        file,
        new TextEncoder().encode(
          `syntax = "proto3";\npackage zz.v1;\n// ${hostile}\nservice HostileService {\n  // ${hostile}\n  rpc Do(DoRequest) returns (DoRequest);\n}\nmessage DoRequest {}\n`,
        ),
      );
      try {
        await vscode.commands.executeCommand("protocall.services.refresh");
        const svc = await waitFor(
          "HostileService in the workspace build",
          async () => {
            const build = (await children(api)).find(
              (e) => e.type === "source" && e.info.kind === "workspace-build",
            );
            if (!build) return undefined;
            const pkg = (await children(api, build)).find((e) => label(api, e) === "zz.v1");
            return pkg
              ? (await children(api, pkg)).find((e) => label(api, e) === "HostileService")
              : undefined;
          },
          60_000,
        );
        const [m] = await children(api, svc);
        for (const e of [svc, m]) {
          const tip = (api.provider.getTreeItem(e) as vscode.TreeItem).tooltip as vscode.MarkdownString;
          assert.notEqual(tip.isTrusted, true);
          assert.notEqual(tip.supportHtml, true);
          assert.ok(!tip.value.includes("<img"), tip.value);
          assert.ok(!tip.value.includes("](command:"), tip.value);
          assert.ok(!tip.value.includes("**bold**"), tip.value);
          assert.ok(plain(tip).includes(hostile), plain(tip));
        }
      } finally {
        await vscode.workspace.fs.delete(vscode.Uri.file(join(env.workspace, "proto/zz")), {
          recursive: true,
        });
        await vscode.commands.executeCommand("protocall.services.refresh");
      }
    },
  },
  {
    name: "Refresh rebuilds and lists again (and the server added above is removed)",
    timeoutMs: 60_000,
    async run(env) {
      const api = await services();
      const server = (await sources(api, () => true)).find((s) => s.info.origin === env.demoUrl);
      if (server)
        assert.equal(await vscode.commands.executeCommand("protocall.services.removeServer", server), true);
      await vscode.commands.executeCommand("protocall.services.refresh");
      const list = await sources(api, (s) => s.some((x) => x.info.kind === "workspace-build"));
      const build = list.find((s) => s.info.kind === "workspace-build") as SourceElement;
      assert.deepEqual(
        (await children(api, await child(api, build, "demo.v1"))).map((e) => label(api, e)),
        ["DemoService", "GreetService"],
      );
    },
  },
];
