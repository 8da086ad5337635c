// Live streams in the real extension host, against the demo server: Start Live Stream on a bidi
// request, Send Next per body document (the response to message 1 is in the panel before message 2 is
// sent), a typed message checked against the input type before it is sent, Close Send, the timeline
// with times, and Save Session as Request writing what was sent as a new request of the file.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import * as vscode from "vscode";
import { parseRpcFile } from "../../../src/core/rpcfile/parse";
import type { LiveApi, LiveStream } from "../../../src/extension/live/live-feature";
import type { SendApi } from "../../../src/extension/send/api";
import { type VscodeTest, type VscodeTestEnv, waitFor } from "../harness";

async function api(): Promise<{ send: SendApi; live: LiveApi }> {
  const ext = vscode.extensions.getExtension("protocall.protocall");
  assert.ok(ext, "the Protocall extension is installed");
  return (await ext.activate()) as { send: SendApi; live: LiveApi };
}

async function requestFile(env: VscodeTestEnv, name: string, text: string): Promise<vscode.Uri> {
  const path = join(env.workspace, "requests", name);
  writeFileSync(path, text);
  const uri = vscode.Uri.file(path);
  await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri));
  return uri;
}

function chat(env: VscodeTestEnv, protocol: string): string {
  return `@host = ${env.demoUrl}

### Chat
# @protocol ${protocol}
{{host}}/demo.v1.DemoService/Chat

{"text": "first"}
{"text": "second"}
`;
}

export const tests: VscodeTest[] = [
  {
    name: "Send Next: the response to message 1 is in the panel before message 2 is sent; Close Send ends the stream",
    timeoutMs: 90_000,
    async run(env) {
      const { send, live } = await api();
      const uri = await requestFile(env, "live-suite.rpc", chat(env, "grpc"));
      const stream = (await vscode.commands.executeCommand("protocall.live.start", uri.toString(), 0)) as
        | LiveStream
        | undefined;
      assert.ok(stream, "the stream started");
      assert.equal(stream.method?.kind, "bidi_streaming");
      assert.equal(send.panel().entry?.state, "running");
      assert.match(send.panel().html, /Live stream/);
      assert.equal(await vscode.commands.executeCommand("protocall.live.sendNext", uri.toString(), 0), true);
      const afterFirst = await waitFor(
        "the first response in the panel",
        async () => {
          const html = send.panel().html;
          return /← received #1/.test(html) ? html : undefined;
        },
        30_000,
      );
      assert.doesNotMatch(afterFirst, /→ sent #2/);
      assert.match(afterFirst, /&quot;first&quot;/);
      assert.equal(await vscode.commands.executeCommand("protocall.live.sendNext", uri.toString(), 0), true);
      await waitFor(
        "the second response",
        async () => (/← received #2/.test(send.panel().html) ? true : undefined),
        30_000,
      );
      const timeline = send.panel().entry?.live?.timeline ?? [];
      assert.deepEqual(
        timeline.map((e) => `${e.dir} ${e.index + 1}`),
        ["sent 1", "received 1", "sent 2", "received 2"],
      );
      for (let i = 1; i < timeline.length; i++) assert.ok(timeline[i].at >= timeline[i - 1].at);
      assert.match(send.panel().html, /<span class="time">\d\d:\d\d:\d\d\.\d{3}<\/span>/);
      assert.equal(await vscode.commands.executeCommand("protocall.live.closeSend", uri.toString(), 0), true);
      const outcome = await stream.done;
      assert.equal(outcome.result?.ok, true, outcome.result?.error?.message);
      assert.deepEqual(
        outcome.result?.messages.map((m) => JSON.parse(m).text),
        ["first", "second"],
      );
      assert.equal(live.stream(uri, 0), stream);
      assert.match(send.panel().html, /Stream ended/);
    },
  },
  {
    name: "a typed message is checked against the input type before it is sent; Save Session as Request writes what was sent",
    timeoutMs: 90_000,
    async run(env) {
      const { send } = await api();
      const uri = await requestFile(env, "live-suite-typed.rpc", chat(env, "connect"));
      const stream = (await vscode.commands.executeCommand(
        "protocall.live.start",
        uri.toString(),
        0,
      )) as LiveStream;
      assert.equal(stream.method?.kind, "bidi_streaming");
      const refused = (await vscode.commands.executeCommand(
        "protocall.live.sendMessage",
        '{"txt": "typo"}',
        uri.toString(),
        0,
      )) as string;
      assert.match(refused, /not a valid demo\.v1\.ChatRequest/);
      assert.match(refused, /txt/);
      assert.match(send.panel().html, /class="live-error">[^<]*txt/);
      const notJson = (await vscode.commands.executeCommand(
        "protocall.live.sendMessage",
        "{text",
        uri.toString(),
        0,
      )) as string;
      assert.match(notJson, /^not JSON: /);
      assert.equal(stream.sent.length, 0, "nothing invalid was sent");
      const ok = await vscode.commands.executeCommand(
        "protocall.live.sendMessage",
        '{"text": "typed"}',
        uri.toString(),
        0,
      );
      assert.equal(ok, undefined);
      await waitFor(
        "the typed message's response",
        async () => (/← received #1/.test(send.panel().html) ? true : undefined),
        30_000,
      );
      assert.equal(
        await vscode.commands.executeCommand("protocall.live.sendNext", uri.toString(), 0, 1),
        true,
      );
      await vscode.commands.executeCommand("protocall.live.closeSend", uri.toString(), 0);
      const outcome = await stream.done;
      assert.deepEqual(
        outcome.result?.messages.map((m) => JSON.parse(m).text),
        ["typed", "second"],
      );
      const name = (await vscode.commands.executeCommand(
        "protocall.live.saveSession",
        uri.toString(),
        0,
      )) as string;
      assert.match(name, /^Chat \(session .+\)$/);
      const doc = await vscode.workspace.openTextDocument(uri);
      const file = parseRpcFile(doc.getText());
      assert.equal(file.requests.length, 2);
      const added = file.requests[1];
      assert.equal(added.name?.text, name);
      assert.equal(added.url?.text, "{{host}}/demo.v1.DemoService/Chat");
      assert.deepEqual(
        added.body.map((b) => (b.kind === "json" ? JSON.parse(b.text) : b.kind)),
        [{ text: "typed" }, { text: "second" }],
      );
      // The saved request sends the same messages.
      const again = await vscode.commands.executeCommand<{ result?: { messages: string[] } }>(
        "protocall.send",
        uri.toString(),
        1,
      );
      assert.deepEqual(
        again?.result?.messages.map((m) => JSON.parse(m).text),
        ["typed", "second"],
      );
      await vscode.commands.executeCommand("workbench.action.files.revert");
    },
  },
  {
    name: "Send Next above a document after an include of several documents sends that document",
    timeoutMs: 90_000,
    async run(env) {
      writeFileSync(join(env.workspace, "requests", "live-two.json"), '{"text": "one"}\n{"text": "two"}\n');
      const uri = await requestFile(
        env,
        "live-suite-include.rpc",
        `### Chat\n# @protocol grpc\n${env.demoUrl}/demo.v1.DemoService/Chat\n\n< ./live-two.json\n{"text": "three"}\n`,
      );
      const stream = (await vscode.commands.executeCommand(
        "protocall.live.start",
        uri.toString(),
        0,
      )) as LiveStream;
      assert.equal(stream.method?.kind, "bidi_streaming");
      assert.deepEqual(
        stream.partStarts,
        [0, 2],
        "the include holds documents 0 and 1; the document after it is 2",
      );
      // The lens above {"text": "three"} passes its body part, 1.
      assert.equal(
        await vscode.commands.executeCommand("protocall.live.sendNext", uri.toString(), 0, 1),
        true,
      );
      // Then the next one after it: none is left.
      assert.equal(await vscode.commands.executeCommand("protocall.live.sendNext", uri.toString(), 0), false);
      assert.equal(
        await vscode.commands.executeCommand("protocall.live.sendNext", uri.toString(), 0, 0),
        true,
      );
      await vscode.commands.executeCommand("protocall.live.closeSend", uri.toString(), 0);
      const outcome = await stream.done;
      assert.deepEqual(
        outcome.result?.messages.map((m) => JSON.parse(m).text),
        ["three", "one"],
      );
    },
  },
];
