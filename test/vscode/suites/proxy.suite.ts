// The editor's Send follows VS Code's proxy settings: with `http.proxy` set to a real tinyproxy, a
// request to the demo server goes through it (the proxy's log shows the CONNECT); with the server's
// host in `http.noProxy` it goes direct.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import * as vscode from "vscode";
import type { SendOutcome } from "../../../src/extension/send/api";
import { startTinyproxy, viaProxyName } from "../../support/proxy";
import type { VscodeTest } from "../harness";

async function send(uri: vscode.Uri): Promise<SendOutcome> {
  const outcome = (await vscode.commands.executeCommand("protocall.send", uri.toString(), 0)) as
    | SendOutcome
    | undefined;
  assert.ok(outcome, "protocall.send returns what it did");
  return outcome;
}

export const tests: VscodeTest[] = [
  {
    name: "Send goes through http.proxy; http.noProxy goes direct",
    timeoutMs: 90_000,
    async run(env) {
      const ext = vscode.extensions.getExtension("protocall.protocall");
      assert.ok(ext);
      await ext.activate();
      const proxy = await startTinyproxy();
      const http = vscode.workspace.getConfiguration("http");
      const base = viaProxyName(env.demoUrl);
      const authority = new URL(base).host;
      const path = join(env.workspace, "requests", "proxy-suite.rpc");
      writeFileSync(path, `### Greet\n${base}/demo.v1.GreetService/Greet\n\n{"name": "proxy"}\n`);
      const uri = vscode.Uri.file(path);
      await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri));
      try {
        await http.update("proxy", proxy.url, vscode.ConfigurationTarget.Global);
        const through = await send(uri);
        assert.equal(through.result?.ok, true, through.result?.error?.message);
        assert.deepEqual(through.result?.messages, ['{\n  "greeting": "Hello, proxy!"\n}']);
        const connects = proxy.connects().filter((c) => c === authority).length;
        assert.ok(connects >= 1, `the proxy logged no CONNECT ${authority}: ${proxy.connects().join(", ")}`);

        await http.update("noProxy", ["0.0.0.0"], vscode.ConfigurationTarget.Global);
        const direct = await send(uri);
        assert.equal(direct.result?.ok, true, direct.result?.error?.message);
        assert.equal(proxy.connects().filter((c) => c === authority).length, connects);
      } finally {
        await http.update("proxy", undefined, vscode.ConfigurationTarget.Global);
        await http.update("noProxy", undefined, vscode.ConfigurationTarget.Global);
        await proxy.stop();
      }
    },
  },
];
