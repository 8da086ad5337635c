// The Deliveries view in the real extension host: the listener started from its command (status bar,
// context key), test pushes (one hostile) received newest first, a delivery opened as JSON, replays,
// a rejected delivery, copy, export, clear, stop. Everything goes through the commands and the API
// that activate() returns.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import http2 from "node:http2";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import * as vscode from "vscode";
import { encodeEvent, samplePushEvent } from "../../../src/core/webhooks/event";
import type { DeliveriesApi } from "../../../src/extension/deliveries/api";
import type { VscodeTest } from "../harness";

const hostileAuthor = "<img src=x onerror=alert(1)>";
const hostileRepository = "<script>alert(1)</script>";

interface Outcome {
  to: string;
  status: number;
  latencyMs: number;
  body: string;
}

async function deliveriesApi(): Promise<DeliveriesApi> {
  const ext = vscode.extensions.getExtension<{ deliveries: DeliveriesApi }>("protocall.protocall");
  assert.ok(ext, "the Protocall extension is installed");
  return (await ext.activate()).deliveries;
}

async function waitFor(what: string, check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A push event as protobuf JSON, with hostile author and repository names. */
function hostileEvent() {
  const now = new Date().toISOString();
  return {
    event: "WEBHOOK_EVENT_REPOSITORY_PUSH",
    payload: {
      repositoryPush: {
        eventTime: now,
        repository: { id: "r1", name: hostileRepository, ownerName: "acme" },
        repositoryCommit: {
          id: "c0ffee00c0ffee00c0ffee00c0ffee00",
          name: "c0ffee00c0ffee00c0ffee00c0ffee00",
          createTime: now,
          author: hostileAuthor,
          tags: [{ name: "[click](command:workbench.action.quit)" }],
        },
      },
    },
  };
}

/** POSTs raw bytes to the listener over https, trusting its certificate file. */
function postRaw(url: string, caFile: string, contentType: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      {
        method: "POST",
        ca: readFileSync(caFile, "utf8"),
        headers: { "content-type": contentType },
        timeout: 10_000,
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", reject);
    req.on("timeout", () => req.destroy(new Error("no answer within 10 s")));
    req.end(body);
  });
}

export const tests: VscodeTest[] = [
  {
    name: "deliveries: the listener starts from its command; status bar and context key follow",
    async run() {
      const api = await deliveriesApi();
      await api.stopListener();
      await api.clear();
      await vscode.commands.executeCommand("workbench.view.extension.protocall");
      const info = (await vscode.commands.executeCommand("protocall.deliveries.startListener")) as {
        callbackUrl: string;
        port: number;
        certPath?: string;
      };
      assert.ok(info, "startListener returns the running listener");
      assert.match(
        info.callbackUrl,
        /^https:\/\/127\.0\.0\.1:\d+\/buf\.alpha\.webhook\.v1alpha1\.EventService\/Event$/,
      );
      assert.equal(api.listener()?.callbackUrl, info.callbackUrl);
      assert.equal(api.listenerRunningContext(), true);
      assert.ok(info.certPath && readFileSync(info.certPath, "utf8").includes("BEGIN CERTIFICATE"));
      await waitFor("the status bar to show the address", () =>
        api.statusBar().text.includes(`127.0.0.1:${info.port} · 0`),
      );
      assert.equal(api.statusBar().visible, true);
      // Starting again keeps the same listener.
      const again = (await vscode.commands.executeCommand("protocall.deliveries.startListener")) as {
        callbackUrl: string;
      };
      assert.equal(again.callbackUrl, info.callbackUrl);
    },
  },
  {
    name: "deliveries: a test push and a hostile one appear newest first, their text literal",
    async run() {
      const api = await deliveriesApi();
      const first = (await vscode.commands.executeCommand("protocall.webhooks.sendTestPush")) as Outcome;
      assert.equal(first.status, 200, first.body);
      assert.equal(first.to, api.listener()?.callbackUrl);
      const second = (await vscode.commands.executeCommand(
        "protocall.webhooks.sendTestPush",
        hostileEvent(),
      )) as Outcome;
      assert.equal(second.status, 200, second.body);
      await waitFor("two deliveries in the view", () => api.items().length === 2);
      const [newest, oldest] = api.items();
      assert.ok(newest.id > oldest.id, "newest first");
      assert.equal(newest.label, `acme/${hostileRepository} c0ffee00`);
      assert.ok(newest.description.includes(hostileAuthor), newest.description);
      assert.ok(newest.description.includes("[click](command:workbench.action.quit)"), newest.description);
      assert.ok(newest.tooltip.includes(`author: ${hostileAuthor}`), newest.tooltip);
      assert.equal(typeof newest.tooltip, "string", "tooltips are plain text, not Markdown");
      assert.equal(newest.contextValue, "delivery");
      assert.match(oldest.label, /^acme\/petapis [0-9a-f]{8}$/);
      assert.match(oldest.description, / · alice · v1\.0\.0$/);
      await waitFor("the status bar count", () => api.statusBar().text.endsWith("· 2"));
    },
  },
  {
    name: "deliveries: clicking one opens the decoded EventRequest, headers and raw size, read-only",
    async run() {
      const api = await deliveriesApi();
      const [newest] = api.items();
      const doc = (await vscode.commands.executeCommand("protocall.deliveries.open", { id: newest.id })) as
        | vscode.TextDocument
        | undefined;
      assert.ok(doc, "open returns the document");
      assert.equal(doc.uri.scheme, "protocall-delivery");
      assert.equal(doc.languageId, "json");
      assert.equal(vscode.window.activeTextEditor?.document.uri.toString(), doc.uri.toString());
      const json = JSON.parse(doc.getText());
      assert.equal(json.id, newest.id);
      assert.equal(json.remoteAddress.replace(/^::ffff:/, ""), "127.0.0.1");
      assert.ok(json.rawSize > 50, `raw size ${json.rawSize}`);
      assert.equal(json.headers["content-type"], "application/proto");
      assert.equal(json.event.payload.repositoryPush.repositoryCommit.author, hostileAuthor);
      assert.equal(json.event.payload.repositoryPush.repository.name, hostileRepository);
      // Served by a content provider (which VS Code opens read-only): no file system can write it back.
      assert.notEqual(vscode.workspace.fs.isWritableFileSystem(doc.uri.scheme), true);
      await vscode.commands.executeCommand("workbench.action.closeActiveEditor");
    },
  },
  {
    name: "deliveries: replay to the listener adds a delivery; replay to any URL reports its answer",
    async run() {
      const api = await deliveriesApi();
      const oldest = api.items().at(-1)!;
      const before = api.count();
      const toListener = (await vscode.commands.executeCommand(
        "protocall.deliveries.replay",
        { id: oldest.id },
        "listener",
      )) as Outcome;
      assert.equal(toListener.status, 200, toListener.body);
      assert.ok(toListener.latencyMs >= 0);
      await waitFor("the replayed delivery", () => api.items().length === before + 1);
      const replayed = api.items()[0];
      assert.equal(replayed.label, oldest.label, "the same event again");
      assert.match(replayed.description, new RegExp(`replay of #${oldest.id}$`));

      const received: string[] = [];
      const server = http.createServer((req, res) => {
        received.push(`${req.method} ${req.url} ${req.headers["content-type"]}`);
        req.resume();
        req.on("end", () => {
          res.writeHead(202, { "content-type": "text/plain" });
          res.end("queued");
        });
      });
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
      try {
        const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/buf`;
        const outcome = (await vscode.commands.executeCommand(
          "protocall.deliveries.replay",
          { id: oldest.id },
          url,
        )) as Outcome;
        assert.deepEqual(
          { status: outcome.status, body: outcome.body, to: outcome.to },
          { status: 202, body: "queued", to: url },
        );
        assert.deepEqual(received, ["POST /hooks/buf application/proto"]);

        // "To the forward URL" goes to protocall.listener.forwardTo.
        const config = vscode.workspace.getConfiguration("protocall.listener");
        await config.update("forwardTo", `${url}/forwarded`, vscode.ConfigurationTarget.Global);
        try {
          const forwarded = (await vscode.commands.executeCommand(
            "protocall.deliveries.replay",
            { id: oldest.id },
            "forward",
          )) as Outcome;
          assert.deepEqual(
            { status: forwarded.status, to: forwarded.to },
            { status: 202, to: `${url}/forwarded` },
          );
          assert.equal(received.at(-1), "POST /hooks/buf/forwarded application/proto");
        } finally {
          await config.update("forwardTo", undefined, vscode.ConfigurationTarget.Global);
        }
      } finally {
        server.close();
      }
    },
  },
  {
    name: "deliveries: a rejected delivery shows with a warning and its reason",
    async run() {
      const api = await deliveriesApi();
      const info = api.listener()!;
      const status = await postRaw(info.callbackUrl, info.certPath!, "text/plain", "not an event");
      assert.equal(status, 415);
      await waitFor("the rejected delivery", () => api.items()[0]?.contextValue === "delivery-rejected");
      const [rejected] = api.items();
      assert.equal(rejected.icon, "warning");
      assert.equal(rejected.label, "Rejected (HTTP 415)");
      assert.match(rejected.description, /unsupported content type "text\/plain"/);
      assert.match(rejected.tooltip, /reason: unsupported content type/);
    },
  },
  {
    name: "deliveries: copy as JSON puts the delivery document on the clipboard",
    async run() {
      const api = await deliveriesApi();
      const item = api.items().find((i) => i.contextValue === "delivery")!;
      const text = (await vscode.commands.executeCommand("protocall.deliveries.copyJson", {
        id: item.id,
      })) as string;
      // The clipboard of a browser-hosted editor may not answer without page focus: check it if it does.
      const clip = await Promise.race([
        vscode.env.clipboard.readText(),
        new Promise<undefined>((r) => setTimeout(() => r(undefined), 2000)),
      ]);
      if (clip !== undefined && clip !== "") assert.equal(clip, text);
      const json = JSON.parse(text);
      assert.equal(json.id, item.id);
      assert.ok(json.event.payload.repositoryPush);
    },
  },
  {
    name: "deliveries: export writes every delivery as JSON Lines or as a JSON array",
    async run(env) {
      const api = await deliveriesApi();
      const count = api.count();
      assert.ok(count >= 4, `${count} deliveries`);
      const jsonl = vscode.Uri.file(join(env.artifacts, "deliveries.jsonl"));
      const r1 = (await vscode.commands.executeCommand("protocall.deliveries.export", jsonl, "jsonl")) as {
        count: number;
      };
      assert.equal(r1.count, count);
      const lines = readFileSync(jsonl.fsPath, "utf8").trimEnd().split("\n");
      assert.equal(lines.length, count);
      const ids = lines.map((l) => JSON.parse(l).id as number);
      assert.deepEqual(
        ids,
        [...ids].sort((a, b) => a - b),
        "oldest first",
      );
      assert.deepEqual(new Set(ids), new Set(api.items().map((i) => i.id)));
      const hostile = lines
        .map((l) => JSON.parse(l))
        .find((d) => d.event?.payload?.repositoryPush?.repository?.name === hostileRepository);
      assert.ok(hostile, "the hostile push is exported as it came");
      assert.ok(Buffer.from(hostile.body, "base64").length === hostile.rawSize);

      const array = vscode.Uri.file(join(env.artifacts, "deliveries.json"));
      await vscode.commands.executeCommand("protocall.deliveries.export", array, "json");
      const parsed = JSON.parse(readFileSync(array.fsPath, "utf8"));
      assert.ok(Array.isArray(parsed));
      assert.deepEqual(
        parsed.map((d: { id: number }) => d.id),
        ids,
      );
    },
  },
  {
    name: "deliveries: a burst of 1,500 events from 50 senders is stored whole; the view keeps the newest 1,000",
    timeoutMs: 120_000,
    async run(env) {
      const api = await deliveriesApi();
      const info = api.listener()!;
      const before = api.count();
      const ca = readFileSync(info.certPath!, "utf8");
      const body = encodeEvent(samplePushEvent());
      const total = 1500;
      let next = 0;
      const statuses: number[] = [];
      // HTTP/2 sessions, one per sender (as the registry's deliverer would keep them): the extension
      // host routes http/https requests through its proxy resolution, which would measure that instead.
      const url = new URL(info.callbackUrl);
      const sessions = Array.from({ length: 50 }, () => http2.connect(url.origin, { ca }));
      const send = (session: http2.ClientHttp2Session) =>
        new Promise<number>((resolve, reject) => {
          const stream = session.request({
            ":method": "POST",
            ":path": url.pathname,
            "content-type": "application/proto",
            "connect-protocol-version": "1",
            "content-length": String(body.byteLength),
          });
          let status = 0;
          stream.on("response", (h) => {
            status = Number(h[":status"]);
          });
          stream.on("error", reject);
          stream.resume();
          stream.on("end", () => resolve(status));
          stream.end(body);
        });
      const started = performance.now();
      try {
        await Promise.all(
          sessions.map(async (session) => {
            while (next < total) {
              next++;
              statuses.push(await send(session));
            }
          }),
        );
      } finally {
        for (const s of sessions) s.close();
      }
      const seconds = (performance.now() - started) / 1000;
      assert.equal(statuses.length, total);
      assert.deepEqual(new Set(statuses), new Set([200]));
      await waitFor("the count to include the burst", () => api.count() === before + total);
      await waitFor("the view to keep the newest 1,000", () => api.items().length === 1000);
      const ids = api.items().map((i) => i.id);
      assert.deepEqual(
        ids,
        [...ids].sort((a, b) => b - a),
        "newest first",
      );
      writeFileSync(
        join(env.artifacts, "burst.txt"),
        `${total} events from 50 senders in ${seconds.toFixed(2)} s (${Math.round(total / seconds)} events/s) into the editor's listener, all stored\n`,
      );
    },
  },
  {
    name: "deliveries: clear empties the view and the store",
    async run() {
      const api = await deliveriesApi();
      await api.clear();
      await waitFor("an empty view", () => api.items().length === 0);
      assert.equal(api.count(), 0);
      await waitFor("the status bar count", () => api.statusBar().text.endsWith("· 0"));
      // The listener keeps serving into the emptied store.
      const outcome = (await vscode.commands.executeCommand("protocall.webhooks.sendTestPush")) as Outcome;
      assert.equal(outcome.status, 200);
      await waitFor("one delivery", () => api.items().length === 1);
    },
  },
  {
    name: "deliveries: stop; the stored deliveries stay listed; the toggle and a test push start it; a bad setting is named",
    async run() {
      const api = await deliveriesApi();
      await vscode.commands.executeCommand("protocall.deliveries.stopListener");
      assert.equal(api.listener(), undefined);
      assert.equal(api.listenerRunningContext(), false);
      await waitFor("the stopped status", () => api.statusBar().text.startsWith("$(circle-slash) Listener"));
      assert.equal(api.items().length, 1, "what was stored stays listed");
      // The toggle (what clicking the status bar item runs) starts it again, then stops it.
      const info = (await vscode.commands.executeCommand("protocall.deliveries.toggleListener")) as {
        callbackUrl: string;
      };
      assert.ok(info?.callbackUrl);
      assert.equal(api.listenerRunningContext(), true);
      await vscode.commands.executeCommand("protocall.deliveries.toggleListener");
      assert.equal(api.listener(), undefined);
      assert.equal(api.listenerRunningContext(), false);

      // Send Test Push starts a stopped listener first.
      const outcome = (await vscode.commands.executeCommand("protocall.webhooks.sendTestPush")) as Outcome;
      assert.equal(outcome.status, 200);
      assert.equal(outcome.to, api.listener()?.callbackUrl);
      await waitFor("the pushed delivery", () => api.items().length === 2);
      await api.stopListener();

      // A bad setting stops the start with the setting's name and the fix.
      const config = vscode.workspace.getConfiguration("protocall.listener");
      await config.update("forwardTo", "localhost:3000", vscode.ConfigurationTarget.Global);
      try {
        await assert.rejects(
          api.startListener(),
          /protocall\.listener\.forwardTo "localhost:3000" is not an http\(s\) URL: fix it, or clear it/,
        );
        assert.equal(await vscode.commands.executeCommand("protocall.deliveries.startListener"), undefined);
        assert.equal(api.listenerRunningContext(), false);
      } finally {
        await config.update("forwardTo", undefined, vscode.ConfigurationTarget.Global);
      }
    },
  },
  {
    name: "deliveries: a store damaged on disk is said above the view; the intact deliveries stay listed",
    async run() {
      const api = await deliveriesApi();
      await api.startListener();
      for (let i = 0; i < 3; i++) {
        const outcome = (await vscode.commands.executeCommand("protocall.webhooks.sendTestPush")) as Outcome;
        assert.equal(outcome.status, 200);
      }
      await waitFor("five deliveries", () => api.count() === 5);
      await api.stopListener();
      const before = api.items().map((i) => i.id);
      // One flipped byte inside the third stored delivery.
      const data = readFileSync(api.storeFile());
      let third = -1;
      for (let i = 0; i < 3; i++) third = data.indexOf('{"kind":"delivery"', third + 1);
      assert.ok(third >= 0, "the store holds delivery records");
      data[third + 40] ^= 0x20;
      writeFileSync(api.storeFile(), data);

      await vscode.commands.executeCommand("protocall.deliveries.refresh");
      await waitFor("the damage said above the view", () => /damaged: skipped/.test(api.viewMessage() ?? ""));
      assert.equal(api.items().length, before.length - 1, "only the damaged delivery is missing");
      // Starting the listener repairs the store and says where the damaged bytes went.
      await api.startListener();
      await waitFor("the repair said", () => /moved to .*\.damaged/.test(api.viewMessage() ?? ""));
      await api.stopListener();
      await vscode.commands.executeCommand("protocall.deliveries.refresh");
      await waitFor("a clean store: no message", () => api.viewMessage() === undefined);
      assert.equal(api.items().length, before.length - 1);
    },
  },
];
