// The Traffic view inside the real extension host: "Start Proxy…" on a server of the Services view
// runs the proxy in front of the demo server; a request sent (▶ Send) to the proxy's URL answers as
// the server does and shows in the Traffic view with its status and timing; it opens as a read-only
// document (headers, each message with its time, trailers), is saved as a request that passes when
// sent again, saved as a mock stub, and replayed (the same answer).
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as vscode from "vscode";
import type { SendOutcome } from "../../../src/extension/send/api";
import type { ServicesApi } from "../../../src/extension/services/services-feature";
import type { SourceElement } from "../../../src/extension/services/tree";
import type { TrafficApi } from "../../../src/extension/traffic/api";
import { type VscodeTest, waitFor } from "../harness";

async function api(): Promise<{ services: ServicesApi; traffic: TrafficApi }> {
  const ext = vscode.extensions.getExtension("protocall.protocall");
  assert.ok(ext, "the Protocall extension is installed");
  return (await ext.activate()) as { services: ServicesApi; traffic: TrafficApi };
}

async function send(uri: vscode.Uri): Promise<SendOutcome> {
  const outcome = (await vscode.commands.executeCommand("protocall.send", uri.toString(), 0)) as
    | SendOutcome
    | undefined;
  assert.ok(outcome, "protocall.send returns what it did");
  return outcome;
}

export const tests: VscodeTest[] = [
  {
    name: "traffic: start the proxy from the Services view, Send through it, see the call, save it as a request",
    timeoutMs: 90_000,
    async run(env) {
      const { services, traffic } = await api();
      env.step("the demo server in the Services view");
      await vscode.commands.executeCommand("protocall.services.addServer", { url: env.demoUrl });
      const server = await waitFor(
        "the demo server's node",
        async () =>
          ((await services.provider.getChildren()) ?? []).find(
            (e): e is SourceElement => e.type === "source" && e.info.origin === env.demoUrl,
          ),
        30_000,
      );
      try {
        env.step("Start Proxy… on the server's node");
        // The node's context menu offers it: the menu entry's `when` holds for the node's contextValue.
        const ext = vscode.extensions.getExtension("protocall.protocall");
        assert.ok(ext, "the Protocall extension is installed");
        const menu = (
          ext.packageJSON.contributes.menus["view/item/context"] as { command: string; when: string }[]
        ).find((m) => m.command === "protocall.traffic.startProxy");
        assert.ok(menu, "Start Proxy… is in the tree items' context menus");
        const contextValue = (services.provider.getTreeItem(server) as vscode.TreeItem).contextValue ?? "";
        const when = /^view == protocall\.services && viewItem =~ \/(.+)\/$/.exec(menu.when);
        assert.ok(when && new RegExp(when[1]).test(contextValue), `${menu.when} for ${contextValue}`);
        const info = (await vscode.commands.executeCommand("protocall.traffic.startProxy", server)) as
          | { url: string; upstream: string }
          | undefined;
        assert.ok(info, "Start Proxy returns the running proxy");
        assert.equal(info.upstream, env.demoUrl);
        assert.match(info.url, /^http:\/\/127\.0\.0\.1:\d+$/);

        env.step("Send a request to the proxy");
        const file = join(env.workspace, "through-proxy.rpc");
        writeFileSync(
          file,
          `# @protocol grpc\n${info.url}/demo.v1.GreetService/Greet\nx-trace: traffic-test\n\n{"name": "traffic"}\n`,
        );
        const outcome = await send(vscode.Uri.file(file));
        assert.equal(outcome.sent, true, outcome.problems.join("\n"));
        assert.equal(outcome.verdict, "passed", JSON.stringify(outcome.failures));

        env.step("the call in the Traffic view");
        const item = await waitFor(
          "the call in the Traffic view",
          () => traffic.items().find((i) => i.label.endsWith(" demo.v1.GreetService/Greet")),
          20_000,
        );
        assert.match(item.description, /^ok · \d+\.\d ms · grpc$/);

        env.step("open the call");
        const doc = (await vscode.commands.executeCommand("protocall.traffic.open", { id: item.id })) as
          | vscode.TextDocument
          | undefined;
        assert.ok(doc, "Open Call returns the document");
        const text = doc.getText();
        assert.match(text, /^x-trace: traffic-test$|^ {2}x-trace: traffic-test$/m);
        assert.match(text, /^ {2}→ \+\d+\.\d ms \{"name":"traffic"\}$/m);
        assert.match(text, /^ {2}← \+\d+\.\d ms \{"greeting":"Hello, traffic!"\}$/m);
        assert.match(text, /^ {2}grpc-status: 0$/m);

        env.step("Save as Request");
        const saved = vscode.Uri.file(join(env.workspace, "saved-from-traffic.rpc"));
        const request = (await vscode.commands.executeCommand(
          "protocall.traffic.saveAsRequest",
          { id: item.id },
          saved,
        )) as string | undefined;
        assert.ok(request, "Save as Request returns the request");
        const written = readFileSync(saved.fsPath, "utf8");
        assert.equal(written, request);
        assert.match(written, /^# @assert status == ok$/m);
        assert.match(written, new RegExp(`^${env.demoUrl}/demo\\.v1\\.GreetService/Greet$`, "m"));
        assert.match(written, /^x-trace: traffic-test$/m);
        // The saved request goes to the server itself, and its assertions hold.
        const again = await send(saved);
        assert.equal(again.verdict, "passed", JSON.stringify(again.failures));

        env.step("Save as Mock Stub and Replay");
        const stubFile = vscode.Uri.file(join(env.workspace, "saved-stub.rpc"));
        const stub = (await vscode.commands.executeCommand(
          "protocall.traffic.saveAsStub",
          { id: item.id },
          stubFile,
        )) as string | undefined;
        assert.ok(stub?.includes("\n>>> ok\n"), stub);
        assert.ok(stub?.includes('{"greeting":"Hello, traffic!"}'), stub);
        const replayed = (await vscode.commands.executeCommand("protocall.traffic.replay", {
          id: item.id,
        })) as { differences: string[] } | undefined;
        assert.deepEqual(replayed?.differences, []);
      } finally {
        await vscode.commands.executeCommand("protocall.traffic.stopProxy");
        await vscode.commands.executeCommand("protocall.services.removeServer", server);
      }
      assert.equal(traffic.proxy(), undefined);
    },
  },
];
