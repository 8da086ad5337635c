// The mock server in the real extension host: started from the Services view's workspace build, a
// request sent to it with Send, the call listed in the Mock Calls view and opened as JSON, the mock
// listed as a server of the Services view, stopped; a misspelled field in a stub is a diagnostic
// whose quick fix corrects it; "▶ Call this stub" starts the mock and gets the stub's answer.
import assert from "node:assert/strict";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { join } from "node:path";
import * as vscode from "vscode";
import type { MockApi } from "../../../src/extension/mock/mock-feature";
import type { MockInfo } from "../../../src/extension/mock-handle";
import type { SendOutcome } from "../../../src/extension/send/api";
import type { ServicesApi } from "../../../src/extension/services/services-feature";
import type { ServicesElement, SourceElement } from "../../../src/extension/services/tree";
import { type VscodeTest, waitFor } from "../harness";

async function apis(): Promise<{ mock: MockApi; services: ServicesApi }> {
  const ext = vscode.extensions.getExtension("protocall.protocall");
  assert.ok(ext, "the Protocall extension is installed");
  return (await ext.activate()) as { mock: MockApi; services: ServicesApi };
}

async function sources(api: ServicesApi, what: string, pick: (s: SourceElement) => boolean) {
  return waitFor(
    what,
    async () => {
      const list = ((await api.provider.getChildren()) ?? []) as ServicesElement[];
      return list.find((e): e is SourceElement => e.type === "source" && pick(e));
    },
    90_000,
  );
}

export const tests: VscodeTest[] = [
  {
    name: "Start Mock Server from the Services view, Send to it, see the call in Mock Calls, open it, stop",
    timeoutMs: 150_000,
    async run(env) {
      const { mock, services } = await apis();
      env.step("the workspace build in the Services view");
      const build = await sources(
        services,
        "the workspace build source",
        (s) => s.info.kind === "workspace-build" && !s.info.error,
      );
      env.step("start the mock from it");
      const info = (await vscode.commands.executeCommand("protocall.mock.start", build)) as
        | MockInfo
        | undefined;
      assert.ok(info, "protocall.mock.start returns the running mock");
      assert.match(info.url, /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.deepEqual(mock.current(), info);
      const bar = mock.statusBar();
      assert.equal(bar.visible, true);
      assert.ok(bar.text.includes(`127.0.0.1:${info.port}`), bar.text);

      env.step("the mock is a server of the Services view");
      const server = await sources(
        services,
        "the mock as a server source",
        (s) => s.info.origin === info.url,
      );
      assert.equal(server.info.kind, "server");
      assert.equal(server.info.error, undefined);

      env.step("Send a request to it");
      const file = join(env.workspace, "requests", "mock-suite.rpc");
      mkdirSync(join(env.workspace, "requests"), { recursive: true });
      writeFileSync(file, `### Greet\n${info.url}/demo.v1.GreetService/Greet\n\n{"name": "world"}\n`);
      const outcome = (await vscode.commands.executeCommand(
        "protocall.send",
        vscode.Uri.file(file).toString(),
        0,
      )) as SendOutcome | undefined;
      assert.equal(outcome?.result?.ok, true, outcome?.result?.error?.message);
      // examples/mocks/greet.rpc answers world with its first stub.
      assert.deepEqual(outcome?.result?.messages, ['{\n  "greeting": "Hello, world!"\n}']);

      env.step("the call in the Mock Calls view");
      const item = await waitFor("the call in the view", async () => mock.items()[0], 20_000);
      assert.equal(item.label, "GreetService/Greet");
      assert.match(item.description, /greet\.rpc:\d+ "greet world" · ok · \d+ ms/);
      assert.equal(item.icon, "pass");
      const doc = await mock.open(item.id);
      assert.equal(doc.uri.scheme, "protocall-mock-call");
      const call = JSON.parse(doc.getText()) as { method: string; requests: unknown[]; responses: unknown[] };
      assert.equal(call.method, "demo.v1.GreetService/Greet");
      assert.deepEqual(call.requests, [{ name: "world" }]);
      assert.deepEqual(call.responses, [{ greeting: "Hello, world!" }]);

      env.step("stop");
      await vscode.commands.executeCommand("protocall.mock.stop");
      assert.equal(mock.current(), undefined);
      assert.equal(mock.statusBar().visible, false);
      await waitFor(
        "the mock gone from the Services view",
        async () => {
          const list = ((await services.provider.getChildren()) ?? []) as ServicesElement[];
          return list.some((e) => e.type === "source" && e.info.origin === info.url) ? undefined : true;
        },
        20_000,
      );
    },
  },
  {
    name: "a misspelled field in a stub's answer is a diagnostic, and its quick fix corrects it",
    timeoutMs: 120_000,
    async run(env) {
      await apis();
      const file = join(env.workspace, "mocks", "typo.rpc");
      writeFileSync(file, '/demo.v1.GreetService/Greet\n\n{"name": "typo"}\n\n>>> ok\n\n{"greting": "hi"}\n');
      const uri = vscode.Uri.file(file);
      const doc = await vscode.workspace.openTextDocument(uri);
      env.step("the diagnostic");
      const diagnostic = await waitFor(
        "the unknown field's diagnostic",
        async () => vscode.languages.getDiagnostics(uri).find((d) => d.message.includes('"greting"')),
        90_000,
      );
      assert.match(
        diagnostic.message,
        /^unknown field "greting" in message demo\.v1\.GreetResponse \(did you mean "greeting"\?\)/,
      );
      assert.equal(diagnostic.range.start.line, 6);
      assert.equal(diagnostic.range.start.character, 1);
      env.step("the quick fix");
      // The editor cancels a code action request when the document's state moves under it (its
      // diagnostics arriving again): ask until it answers.
      const fix = await waitFor(
        "the quick fix",
        async () => {
          const actions = await vscode.commands
            .executeCommand<vscode.CodeAction[]>(
              "vscode.executeCodeActionProvider",
              uri,
              diagnostic.range,
              vscode.CodeActionKind.QuickFix.value,
            )
            .then(
              (a) => a,
              () => [],
            );
          return actions.find((a) => a.title === 'Change to "greeting"');
        },
        30_000,
      );
      assert.ok(fix.edit, "the quick fix edits the file");
      assert.equal(await vscode.workspace.applyEdit(fix.edit), true);
      assert.equal(doc.lineAt(6).text, '{"greeting": "hi"}');
      await waitFor(
        "the diagnostic gone",
        async () => (vscode.languages.getDiagnostics(uri).length === 0 ? true : undefined),
        60_000,
      );
      await doc.save();
    },
  },
  {
    name: "Call this stub starts the mock and shows the stub's answer",
    timeoutMs: 120_000,
    async run(env) {
      const { mock } = await apis();
      const uri = vscode.Uri.file(join(env.workspace, "mocks", "greet.rpc"));
      await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri));
      env.step("the lenses of the stub file: Call this stub above each stub, nothing else");
      const lenses = await waitFor(
        "the stub file's lenses",
        async () => {
          const found = await vscode.commands.executeCommand<vscode.CodeLens[]>(
            "vscode.executeCodeLensProvider",
            uri,
          );
          return found.length >= 3 ? found : undefined;
        },
        60_000,
      );
      assert.deepEqual(
        lenses.map((l) => [l.range.start.line, l.command?.title, l.command?.arguments?.[1]]),
        [
          [6, "▶ Call this stub", 0],
          [18, "▶ Call this stub", 1],
          [25, "▶ Call this stub", 2],
        ],
      );
      env.step("call the first stub");
      const outcome = (await vscode.commands.executeCommand("protocall.mock.callStub", uri.toString(), 0)) as
        | SendOutcome
        | undefined;
      try {
        assert.ok(mock.current(), "the mock was started");
        assert.equal(
          outcome?.result?.ok,
          true,
          outcome?.result?.error?.message ?? JSON.stringify(outcome?.problems),
        );
        assert.deepEqual(outcome?.result?.messages, ['{\n  "greeting": "Hello, world!"\n}']);
        const item = await waitFor("the call in the view", async () => mock.items()[0], 20_000);
        assert.match(item.description, /greet\.rpc:\d+ "greet world" · ok/);
      } finally {
        await mock.stop();
      }
    },
  },
  {
    name: "Start Mock Server from a stub file serves that file's stubs; from a request file, the workspace's",
    timeoutMs: 120_000,
    async run(env) {
      const { mock } = await apis();
      const served = async (from: vscode.Uri): Promise<string[]> => {
        const info = (await vscode.commands.executeCommand("protocall.mock.start", from)) as
          | MockInfo
          | undefined;
        assert.ok(info, "the mock started");
        try {
          const r = await fetch(`${info.url}/.protocall/mock/stubs`);
          const body = (await r.json()) as { stubs: { stub: string }[] };
          return [...new Set(body.stubs.map((s) => s.stub.replace(/:\d+.*$/, "")))].sort();
        } finally {
          await mock.stop();
        }
      };
      env.step("from mocks/greet.rpc");
      assert.deepEqual(await served(vscode.Uri.file(join(env.workspace, "mocks", "greet.rpc"))), [
        join("mocks", "greet.rpc"),
      ]);
      env.step("from requests/demo.rpc");
      const all = await served(vscode.Uri.file(join(env.workspace, "requests", "demo.rpc")));
      assert.ok(
        all.includes(join("mocks", "greet.rpc")) && all.includes(join("mocks", "demo.rpc")),
        all.join(", "),
      );
    },
  },
  {
    name: "Start Mock Server from a server source serves the server's schema, read with reflection",
    timeoutMs: 120_000,
    async run(env) {
      const { mock } = await apis();
      const source: SourceElement = {
        type: "source",
        info: { id: `server:${env.demoUrl}`, kind: "server", label: "demo server", origin: env.demoUrl },
      };
      const info = (await vscode.commands.executeCommand("protocall.mock.start", source)) as
        | MockInfo
        | undefined;
      assert.ok(info, "the mock started");
      try {
        assert.equal(info.schemaLabel, "demo server");
        // The workspace's stubs answer the server's methods; one without a stub (Inspect) answers a
        // message generated from the reflected schema.
        const generated = await fetch(`${info.url}/demo.v1.DemoService/Inspect`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: "{}",
        });
        assert.equal(generated.status, 200);
        assert.equal(typeof (await generated.json()), "object");
        const r = await fetch(`${info.url}/demo.v1.GreetService/Greet`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ name: "world" }),
        });
        assert.equal(r.status, 200);
        assert.deepEqual(await r.json(), { greeting: "Hello, world!" });
        const items = await waitFor(
          "both calls in the view",
          async () => (mock.items().length === 2 ? mock.items() : undefined),
          20_000,
        );
        assert.match(items[0].description, /greet\.rpc:\d+ "greet world" · ok/);
        assert.match(items[1].description, /^generated · ok/);
      } finally {
        await mock.stop();
      }
    },
  },
  {
    name: "protocall.mock.port fixes the mock's port",
    timeoutMs: 90_000,
    async run() {
      const { mock } = await apis();
      const probe = net.createServer();
      await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
      const port = (probe.address() as net.AddressInfo).port;
      await new Promise<void>((resolve) => probe.close(() => resolve()));
      const config = vscode.workspace.getConfiguration("protocall");
      await config.update("mock.port", port, vscode.ConfigurationTarget.Workspace);
      try {
        const info = await mock.start();
        assert.equal(info.port, port);
        assert.equal(info.url, `http://127.0.0.1:${port}`);
      } finally {
        await mock.stop();
        await config.update("mock.port", undefined, vscode.ConfigurationTarget.Workspace);
      }
    },
  },
  {
    name: "a stub file created while the mock runs is served, and its edits reload",
    timeoutMs: 120_000,
    async run(env) {
      const { mock } = await apis();
      const info = await mock.start();
      const file = join(env.workspace, "mocks", "inspect.rpc");
      const inspect = async () => {
        const r = await fetch(`${info.url}/demo.v1.DemoService/Inspect`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: "{}",
        });
        return ((await r.json()) as { httpVersion?: string }).httpVersion;
      };
      try {
        env.step("a new stub file");
        writeFileSync(file, '/demo.v1.DemoService/Inspect\n\n>>> ok\n\n{"httpVersion": "from a new stub"}\n');
        await waitFor(
          "the new stub served",
          async () => ((await inspect()) === "from a new stub" ? true : undefined),
          30_000,
        );
        env.step("its edit");
        writeFileSync(file, '/demo.v1.DemoService/Inspect\n\n>>> ok\n\n{"httpVersion": "edited"}\n');
        await waitFor(
          "the edit served",
          async () => ((await inspect()) === "edited" ? true : undefined),
          30_000,
        );
      } finally {
        await mock.stop();
        rmSync(file, { force: true });
      }
    },
  },
];
