// Send of a `# @stream-file` request in the real extension host: while the file streams, the response
// panel (and the progress notification, which gets the same line) shows the bytes sent of the file's
// size, and at the end the whole file, with the rate; the server received every byte.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { closeSync, openSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import * as vscode from "vscode";
import type { SendApi } from "../../../src/extension/send/api";
import { startUploadServer } from "../../support/upload-server";
import type { VscodeTest } from "../harness";

async function api(): Promise<SendApi> {
  const ext = vscode.extensions.getExtension("protocall.protocall");
  assert.ok(ext, "the Protocall extension is installed");
  return ((await ext.activate()) as { send: SendApi }).send;
}

export const tests: VscodeTest[] = [
  {
    name: "a # @stream-file upload shows its progress while it streams, and the whole file at the end",
    timeoutMs: 120_000,
    async run(env) {
      const send = await api();
      const server = await startUploadServer();
      const file = join(env.workspace, "requests", "upload.bin");
      const fd = openSync(file, "w");
      const block = randomBytes(1024 * 1024);
      for (let i = 0; i < 48; i++) writeSync(fd, block);
      closeSync(fd);
      const rpc = join(env.workspace, "requests", "upload.rpc");
      writeFileSync(
        rpc,
        `### Upload\n# @protocol grpc\n# @schema ${server.schema}\n# @stream-file data=./upload.bin\n${server.url}/upload.v1.UploadService/Upload\n`,
      );
      try {
        const uri = vscode.Uri.file(rpc);
        await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri));
        env.step("send, watching the panel");
        const seen = new Set<string>();
        let running = true;
        const sent = send.send(uri, 0).finally(() => {
          running = false;
        });
        while (running) {
          const line = /Uploaded ([^<]*)</.exec(send.panel().html)?.[1];
          if (line) seen.add(line);
          await new Promise((r) => setTimeout(r, 20));
        }
        env.step("the send's outcome");
        const outcome = await sent;
        assert.equal(
          outcome?.result?.ok,
          true,
          outcome?.result?.error?.message ?? outcome?.problems.join("\n"),
        );
        assert.equal(JSON.parse(outcome?.result?.messages[0] ?? "{}").bytes, String(48 * 1024 * 1024));
        const total = 48 * 1024 * 1024;
        assert.equal(outcome?.entry?.upload?.sent, total);
        assert.equal(outcome?.entry?.upload?.total, total);
        assert.match(
          outcome?.entry?.upload?.line ?? "",
          /^48\.0 MiB \/ 48\.0 MiB {2}100% {2}[\d.]+ (KiB|MiB|GiB)\/s$/,
        );
        assert.match(send.panel().html, /Uploaded 48\.0 MiB \/ 48\.0 MiB {2}100%/);
        // While it ran, the panel showed a part of the file sent.
        assert.ok(
          [...seen].some((l) => /^[\d.]+ (B|KiB|MiB) \/ 48\.0 MiB {2}\d{1,2}%/.test(l)),
          [...seen].join("\n"),
        );
      } finally {
        env.step("the upload server stops");
        await server.close();
        rmSync(file, { force: true });
      }
    },
  },
];
