// "Send" inside the real extension host: protocall.send on a .rpc file against the demo server returns
// the result the response panel shows (unary, a server stream, an error with details), keeps a
// history per request, applies the timeout setting and the active environment; the copy commands put
// the command line on the clipboard; an undefined variable is reported and nothing is sent.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import * as vscode from "vscode";
import { defaultRegistryConfig } from "../../../src/core/registry-emulator/config";
import { startRegistryEmulator } from "../../../src/core/registry-emulator/server";
import { buildWorkspace } from "../../../src/core/schema/compiler";
import { startDemoServer } from "../../../src/demo/server";
import type { SendApi, SendOutcome } from "../../../src/extension/send/api";
import type { WebhooksApi } from "../../../src/extension/webhooks/api";
import { createTestPki } from "../../support/tls";
import { type VscodeTest, type VscodeTestEnv, waitFor } from "../harness";
import { pushWithBuf } from "../module-push";

async function api(): Promise<SendApi> {
  const ext = vscode.extensions.getExtension("protocall.protocall");
  assert.ok(ext, "the Protocall extension is installed");
  return ((await ext.activate()) as { send: SendApi }).send;
}

/** Writes requests/<name> into the workspace and opens it; returns its URI. */
async function requestFile(env: VscodeTestEnv, name: string, text: string): Promise<vscode.Uri> {
  const path = join(env.workspace, "requests", name);
  writeFileSync(path, text);
  const uri = vscode.Uri.file(path);
  await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri));
  return uri;
}

function requests(env: VscodeTestEnv): string {
  return `@host = ${env.demoUrl}

### Greet
{{host}}/demo.v1.GreetService/Greet

{"name": "suite"}

### Count
# @protocol grpc
{{host}}/demo.v1.DemoService/Count

{"count": 3, "delayMs": 50, "text": "tick"}

### Fail
{{host}}/demo.v1.DemoService/Fail

{"code": "CODE_NOT_FOUND", "message": "no such order", "details": ["DETAIL_ERROR_INFO", "DETAIL_BAD_REQUEST"]}

### Slow
{{host}}/demo.v1.DemoService/Count

{"count": 2, "delayMs": 600000}
`;
}

async function send(uri: vscode.Uri, index: number): Promise<SendOutcome> {
  const outcome = (await vscode.commands.executeCommand("protocall.send", uri.toString(), index)) as
    | SendOutcome
    | undefined;
  assert.ok(outcome, "protocall.send returns what it did");
  return outcome;
}

export const tests: VscodeTest[] = [
  {
    name: "protocall.send runs a unary request and the response panel shows it",
    timeoutMs: 60_000,
    async run(env) {
      const send_ = await api();
      const uri = await requestFile(env, "send-suite.rpc", requests(env));
      const outcome = await send(uri, 0);
      assert.equal(outcome.sent, true);
      assert.equal(outcome.result?.ok, true, outcome.result?.error?.message);
      assert.equal(outcome.result?.code, "ok");
      assert.equal(outcome.result?.exitCode, 0);
      assert.deepEqual(outcome.result?.messages, ['{\n  "greeting": "Hello, suite!"\n}']);
      const panel = send_.panel();
      assert.equal(panel.visible, true);
      assert.equal(panel.title, "Response: Greet");
      assert.equal(panel.entry?.id, outcome.entry?.id);
      assert.match(panel.html, /ok · exit 0 · /);
      assert.match(panel.html, /Hello, suite!/);
    },
  },
  {
    name: "a server stream: every message in order, trailers; a second send goes to the history",
    timeoutMs: 60_000,
    async run(env) {
      const send_ = await api();
      const uri = await requestFile(env, "send-suite.rpc", requests(env));
      const first = await send(uri, 1);
      assert.equal(first.result?.ok, true, first.result?.error?.message);
      assert.deepEqual(
        first.result?.messages.map((m) => JSON.parse(m).number),
        [1, 2, 3],
      );
      assert.ok(first.result?.trailers.some(([n]) => n === "grpc-status"));
      const second = await send(uri, 1);
      const history = send_.history(uri, 1);
      assert.deepEqual(
        history.slice(0, 2).map((e) => e.id),
        [second.entry?.id, first.entry?.id],
      );
      assert.deepEqual(send_.panel().position, { index: 0, count: history.length });
    },
  },
  {
    name: "an error: code name, exit code and decoded details",
    timeoutMs: 60_000,
    async run(env) {
      const send_ = await api();
      const uri = await requestFile(env, "send-suite.rpc", requests(env));
      const outcome = await send(uri, 2);
      const r = outcome.result;
      assert.equal(r?.ok, false);
      assert.equal(r?.code, "not_found");
      assert.equal(r?.exitCode, 40);
      assert.equal(r?.error?.message, "no such order");
      assert.deepEqual(
        r?.error?.details.map((d) => d.type),
        ["google.rpc.ErrorInfo", "google.rpc.BadRequest"],
      );
      assert.deepEqual(JSON.parse(r?.error?.details[1].json ?? "null"), {
        fieldViolations: [{ field: "name", description: "must not be empty" }],
      });
      assert.match(send_.panel().html, /not_found · exit 40/);
      assert.match(send_.panel().html, /google\.rpc\.BadRequest/);
    },
  },
  {
    name: "protocall.timeout limits a request that sets none: deadline_exceeded, exit 32",
    timeoutMs: 60_000,
    async run(env) {
      const uri = await requestFile(env, "send-suite.rpc", requests(env));
      const config = vscode.workspace.getConfiguration("protocall");
      await config.update("timeout", 0.5, vscode.ConfigurationTarget.Workspace);
      try {
        // The request's stream would run for ten minutes: only the 0.5 s limit can end it.
        const outcome = await send(uri, 3);
        assert.equal(outcome.result?.code, "deadline_exceeded");
        assert.equal(outcome.result?.exitCode, 32);
      } finally {
        await config.update("timeout", undefined, vscode.ConfigurationTarget.Workspace);
      }
    },
  },
  {
    name: "protocall.protocol is the protocol of requests that set none; protocall.history.size caps the history",
    timeoutMs: 60_000,
    async run(env) {
      const send_ = await api();
      const uri = await requestFile(env, "send-settings.rpc", requests(env));
      const config = vscode.workspace.getConfiguration("protocall");
      await config.update("protocol", "grpcweb", vscode.ConfigurationTarget.Workspace);
      await config.update("history.size", 2, vscode.ConfigurationTarget.Global);
      try {
        const greet = await send(uri, 0);
        assert.equal(greet.entry?.protocol, "grpcweb");
        assert.equal(greet.result?.ok, true, greet.result?.error?.message);
        // Count sets @protocol grpc itself.
        assert.equal((await send(uri, 1)).entry?.protocol, "grpc");
        await send(uri, 0);
        const last = await send(uri, 0);
        const history = send_.history(uri, 0);
        assert.equal(history.length, 2);
        assert.equal(history[0].id, last.entry?.id);
      } finally {
        await config.update("protocol", undefined, vscode.ConfigurationTarget.Workspace);
        await config.update("history.size", undefined, vscode.ConfigurationTarget.Global);
      }
    },
  },
  {
    name: "the active environment's variables are used (protocall.environment)",
    timeoutMs: 60_000,
    async run(env) {
      const envFile = join(env.workspace, "protocall.env.json");
      writeFileSync(envFile, JSON.stringify({ suite: { base: env.demoUrl, who: "environment" } }));
      const config = vscode.workspace.getConfiguration("protocall");
      await config.update("environment", "suite", vscode.ConfigurationTarget.Workspace);
      try {
        const uri = await requestFile(
          env,
          "send-env.rpc",
          '{{base}}/demo.v1.GreetService/Greet\n\n{"name": "{{who}}"}\n',
        );
        const outcome = await send(uri, 0);
        assert.equal(outcome.result?.ok, true, outcome.result?.error?.message ?? outcome.problems.join("\n"));
        assert.deepEqual(JSON.parse(outcome.result?.messages[0] ?? "null"), {
          greeting: "Hello, environment!",
        });
      } finally {
        await config.update("environment", undefined, vscode.ConfigurationTarget.Workspace);
      }
    },
  },
  {
    name: "a server without reflection: the workspace build (examples/buf.yaml) resolves the method",
    timeoutMs: 90_000,
    async run(env) {
      const server = await startDemoServer({ reflection: false });
      try {
        const uri = await requestFile(
          env,
          "send-no-reflection.rpc",
          `${server.url}/demo.v1.DemoService/Sum\n\n{"number": 40}\n{"number": 2}\n`,
        );
        const outcome = await send(uri, 0);
        assert.equal(outcome.result?.ok, true, outcome.result?.error?.message ?? outcome.problems.join("\n"));
        assert.deepEqual(JSON.parse(outcome.result?.messages[0] ?? "null"), { sum: "42", count: 2 });
      } finally {
        await server.close();
      }
    },
  },
  {
    name: "the workspace's schemas as the language server reads them: a *.binpb in a folder resolves the method, next to a root that fails to build",
    timeoutMs: 120_000,
    async run(env) {
      const send_ = await api();
      const server = await startDemoServer({ reflection: false });
      const sets = join(env.workspace, "sets");
      const proto = join(env.workspace, "proto");
      const hidden = join(env.workspace, ".proto-away");
      try {
        env.step("build the demo schema into sets/demo.binpb, then take the .proto files away");
        const root = vscode.extensions.getExtension("protocall.protocall")?.extensionPath ?? "";
        const arch = process.arch === "x64" ? "x64" : process.arch;
        const bufPath = join(root, "node_modules", `@bufbuild/buf-${process.platform}-${arch}`, "bin", "buf");
        const { bytes } = await buildWorkspace(env.workspace, { bufPath });
        mkdirSync(sets, { recursive: true });
        writeFileSync(join(sets, "demo.binpb"), bytes);
        // buf.yaml's module is gone: its root fails to build; the descriptor set has the services.
        renameSync(proto, hidden);
        await send_.refresh();
        const uri = await requestFile(
          env,
          "send-binpb.rpc",
          `${server.url}/demo.v1.DemoService/Sum\n\n{"number": 40}\n{"number": 2}\n`,
        );
        env.step("send");
        const outcome = await send(uri, 0);
        assert.equal(outcome.result?.ok, true, outcome.result?.error?.message ?? outcome.problems.join("\n"));
        assert.deepEqual(JSON.parse(outcome.result?.messages[0] ?? "null"), { sum: "42", count: 2 });
      } finally {
        if (existsSync(hidden)) renameSync(hidden, proto);
        rmSync(sets, { recursive: true, force: true });
        await send_.refresh();
        await server.close();
      }
    },
  },
  {
    name: "a setting changed while a request runs (its schemas and connections refresh): the request goes on to its last message",
    timeoutMs: 90_000,
    async run(env) {
      const send_ = await api();
      // No reflection: the method comes from the workspace build, which the change drops too.
      const server = await startDemoServer({ reflection: false });
      const config = vscode.workspace.getConfiguration("protocall");
      try {
        const uri = await requestFile(
          env,
          "send-refresh.rpc",
          `${server.url}/demo.v1.DemoService/Count\n\n{"count": 3, "delayMs": 1500, "text": "tick"}\n`,
        );
        const running = send(uri, 0);
        env.step("wait for the first message");
        await waitFor(
          "the first message in the response panel",
          () => ((send_.panel().entry?.messages.length ?? 0) >= 1 ? true : undefined),
          60_000,
        );
        env.step("change protocall.compiler while the stream runs");
        await config.update("compiler", "buf", vscode.ConfigurationTarget.Workspace);
        env.step("wait for the request to end");
        const outcome = await running;
        assert.equal(outcome.result?.ok, true, outcome.result?.error?.message);
        assert.equal(outcome.result?.messages.length, 3);
        // The next request builds and dials anew, and is answered as well.
        const again = await send(uri, 0);
        assert.equal(again.result?.ok, true, again.result?.error?.message);
      } finally {
        await config.update("compiler", undefined, vscode.ConfigurationTarget.Workspace);
        await server.close();
      }
    },
  },
  {
    name: "a registry module as the schema (@schema, and added in the Services view): the token and CA are the editor's sign-in; signed out or refused, the reason",
    // A push with the real buf, a registry over TLS and five calls: minutes on a loaded machine.
    timeoutMs: 240_000,
    async run(env) {
      const ext = vscode.extensions.getExtension("protocall.protocall");
      assert.ok(ext, "the Protocall extension is installed");
      const { webhooks } = (await ext.activate()) as { webhooks: WebhooksApi };
      env.step("start the demo server, the certificates and the registry");
      const server = await startDemoServer({ reflection: false });
      const pki = await createTestPki(["localhost"]);
      const registry = await startRegistryEmulator({
        config: defaultRegistryConfig,
        tls: { cert: pki.server.cert, key: pki.server.key },
      });
      const remote = `localhost:${registry.port}`;
      const config = vscode.workspace.getConfiguration("protocall");
      try {
        // The demo API's .proto files, pushed by the real buf as acme/petapis.
        const files: Record<string, string> = {};
        for (const name of readdirSync(join(env.workspace, "proto/demo/v1"))) {
          files[`demo/v1/${name}`] = readFileSync(join(env.workspace, "proto/demo/v1", name), "utf8");
        }
        env.step("buf push acme/petapis");
        await pushWithBuf(pki.ca.certPath, `${remote}/acme/petapis`, files);
        env.step("add the registry Modules to protocall.registries");
        await config.update(
          "registries",
          [{ name: "Modules", url: `https://${remote}`, caFile: pki.ca.certPath }],
          vscode.ConfigurationTarget.Global,
        );
        const uri = await requestFile(
          env,
          "send-module.rpc",
          `# @schema ${remote}/acme/petapis\n${server.url}/demo.v1.GreetService/Greet\n\n{"name": "module"}\n`,
        );
        // Signed out: neither the registry's CA (its caFile) nor a token.
        env.step("send, signed out");
        const untrusted = await send(uri, 0);
        assert.equal(untrusted.result?.ok, false);
        assert.match(untrusted.result?.error?.message ?? "", /certificate signed by unknown authority/);
        // A token the registry refuses: the message says it is the editor's.
        env.step("sign in with a token the registry refuses");
        await webhooks.signIn("Modules", "not-a-token");
        env.step("send, with the refused token");
        const refused = await send(uri, 0);
        assert.equal(refused.result?.ok, false);
        assert.match(
          refused.result?.error?.message ?? "",
          new RegExp(`the token the editor holds for ${remote} was refused: sign in to ${remote} again`),
        );
        env.step("sign in as alice");
        await webhooks.signIn("Modules", "alice-token");
        env.step("send, signed in");
        const outcome = await send(uri, 0);
        assert.equal(outcome.result?.ok, true, outcome.result?.error?.message ?? outcome.problems.join("\n"));
        assert.deepEqual(JSON.parse(outcome.result?.messages[0] ?? "null"), { greeting: "Hello, module!" });

        // The module added as a source of the Services view (protocall.schemas) serves a request that
        // names no @schema, as the language server reads it; the workspace build is off, so only the
        // module can know the method.
        env.step("turn the workspace build off");
        await config.update("workspaceBuild", false, vscode.ConfigurationTarget.Workspace);
        const plain = await requestFile(
          env,
          "send-module-setting.rpc",
          `${server.url}/demo.v1.GreetService/Greet\n\n{"name": "setting"}\n`,
        );
        env.step("send without @schema, before the module is added");
        const unknown = await send(plain, 0);
        assert.equal(unknown.result?.ok, false, "without the module, nothing knows the method");
        const spec = `${remote}/acme/petapis`;
        env.step("protocall.services.addRegistryModule");
        assert.equal(
          await vscode.commands.executeCommand("protocall.services.addRegistryModule", spec),
          spec,
        );
        env.step("send without @schema, the module added");
        const viaSetting = await send(plain, 0);
        assert.equal(
          viaSetting.result?.ok,
          true,
          viaSetting.result?.error?.message ?? viaSetting.problems.join("\n"),
        );
        assert.deepEqual(JSON.parse(viaSetting.result?.messages[0] ?? "null"), {
          greeting: "Hello, setting!",
        });
      } finally {
        env.step("clean up: settings, sign-out, registry and server closed");
        await config.update("schemas", undefined, vscode.ConfigurationTarget.Workspace);
        await config.update("workspaceBuild", undefined, vscode.ConfigurationTarget.Workspace);
        await webhooks.signOut("Modules").catch(() => {});
        await config.update("registries", undefined, vscode.ConfigurationTarget.Global);
        await registry.close();
        await server.close();
      }
    },
  },
  {
    name: "the workspace build follows protocall.compiler and protocall.protocPath, as the language server's does",
    timeoutMs: 90_000,
    async run(env) {
      const server = await startDemoServer({ reflection: false });
      const config = vscode.workspace.getConfiguration("protocall");
      const protoc = join(env.workspace, "no-such-protoc");
      try {
        const uri = await requestFile(
          env,
          "send-protoc.rpc",
          `${server.url}/demo.v1.DemoService/Sum\n\n{"number": 40}\n{"number": 2}\n`,
        );
        await config.update("compiler", "protoc", vscode.ConfigurationTarget.Workspace);
        await config.update("protocPath", protoc, vscode.ConfigurationTarget.Workspace);
        const outcome = await send(uri, 0);
        assert.equal(outcome.result?.ok, false);
        assert.match(
          outcome.result?.error?.message ?? "",
          new RegExp(`the configured protoc ${protoc.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} does not exist`),
        );
      } finally {
        await config.update("compiler", undefined, vscode.ConfigurationTarget.Workspace);
        await config.update("protocPath", undefined, vscode.ConfigurationTarget.Workspace);
        await server.close();
      }
    },
  },
  {
    name: "an undefined variable: not sent, the problem is reported with its place",
    timeoutMs: 60_000,
    async run(env) {
      const send_ = await api();
      // A server that counts what reaches it.
      let received = 0;
      const server = http.createServer((_req, res) => {
        received++;
        res.end();
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      try {
        const port = (server.address() as AddressInfo).port;
        const uri = await requestFile(
          env,
          "send-undefined.rpc",
          `### Typo\nhttp://127.0.0.1:${port}/demo.v1.GreetService/Greet\nx-token: {{nope}}\n\n{}\n`,
        );
        const outcome = await send(uri, 0);
        assert.equal(outcome.sent, false);
        assert.equal(outcome.result, undefined);
        assert.equal(outcome.problems.length, 1);
        assert.match(outcome.problems[0], /send-undefined\.rpc:3:10: undefined variable \{\{nope\}\}/);
        assert.equal(send_.panel().entry?.state, "not-sent");
        assert.match(send_.panel().html, /Not sent: fix the request/);
        await new Promise((r) => setTimeout(r, 300));
        assert.equal(received, 0, "nothing reached the server");
      } finally {
        await new Promise((r) => server.close(r));
      }
    },
  },
  {
    // The commands return what they put on the clipboard (a headless browser window holds
    // clipboard reads back, so the text is checked as returned).
    name: "Copy as protocall curl / buf curl / grpcurl give the equivalent command lines",
    timeoutMs: 60_000,
    async run(env) {
      const uri = await requestFile(env, "send-suite.rpc", requests(env));
      const url = `${env.demoUrl}/demo.v1.GreetService/Greet`;
      const protocall = await vscode.commands.executeCommand<string>(
        "protocall.copyAsCurl",
        uri.toString(),
        0,
      );
      assert.equal(protocall, `protocall curl -d '{"name": "suite"}' ${url}`);
      const buf = await vscode.commands.executeCommand<string>("protocall.copyAsBufCurl", uri.toString(), 0);
      assert.equal(buf, `buf curl -d '{"name": "suite"}' --http2-prior-knowledge ${url}`);
      const grpcurl = await vscode.commands.executeCommand<string>(
        "protocall.copyAsGrpcurl",
        uri.toString(),
        1,
      );
      const host = new URL(env.demoUrl).host;
      assert.equal(
        grpcurl,
        `grpcurl -plaintext -d '{"count": 3, "delayMs": 50, "text": "tick"}' ${host} demo.v1.DemoService/Count`,
      );
    },
  },
];
