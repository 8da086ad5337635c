// `protocall registry serve` flags around the module API: its help, --max-upload, and one-line errors
// for a state file that is not one or is in use.
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { UploadService } from "../../src/gen/buf/registry/module/v1/upload_service_pb";
import { startCliServer } from "../core/webhooks/support";
import { runCli } from "../support/cli";

test("--help describes the module API, how buf reaches the emulator, and the push event mapping", async () => {
  const help = await runCli(["registry", "serve", "--help"]);
  assert.equal(help.code, 0);
  for (const text of [
    /buf\.registry\.module\.v1 ModuleService \(GetModules, CreateModules\), UploadService/,
    /CommitService\s+\(GetCommits, ListCommits\), LabelService \(ListLabels, ListLabelHistory\), ResourceService\s+\(GetResources\)/,
    /buf registry module commit\|label\s+list/,
    /buf push --create` creates the module with the caller as Admin/,
    /localhost:PORT\/owner\/module/,
    /SSL_CERT_FILE/,
    /tags = the labels the push moved/,
    /--max-upload SIZE/,
    /Other services answer unimplemented/,
  ]) {
    assert.match(help.stdout, text);
  }
});

test("--max-upload caps a push: a larger Upload is refused with resource_exhausted; a bad size is a one-line error", async () => {
  const bad = await runCli(["registry", "serve", "--max-upload", "lots"]);
  assert.equal(bad.code, 1);
  assert.equal(
    bad.stderr,
    'protocall: invalid value "lots" for --max-upload: it is not a size; write bytes, or 64KiB, 256MiB, 1GiB\n',
  );
  const server = await startCliServer(["registry", "serve", "--max-upload", "4KiB"]);
  try {
    const upload = createClient(
      UploadService,
      createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" }),
    );
    await assert.rejects(
      upload.upload(
        {
          contents: [
            {
              moduleRef: { value: { case: "name", value: { owner: "acme", module: "petapis" } } },
              files: [{ path: "a.proto", content: Buffer.alloc(8 * 1024, 0x20) }],
            },
          ],
        },
        { headers: { authorization: "Bearer alice-token" } },
      ),
      (err: unknown) => {
        const e = ConnectError.from(err);
        assert.equal(e.code, Code.ResourceExhausted);
        assert.match(
          e.rawMessage,
          /exceeds the limit of 4096 bytes for \/buf\.registry\.module\.v1\.UploadService\/Upload/,
        );
        return true;
      },
    );
  } finally {
    await server.stop();
  }
});

test("a --state file that is not a state file, or one in use, is a one-line error", async () => {
  const dir = mkdtempSync(join(tmpdir(), "protocall-registry-state-"));
  const foreign = join(dir, "notes.txt");
  writeFileSync(foreign, "my notes");
  const r = await runCli(["registry", "serve", "--state", foreign]);
  assert.equal(r.code, 1);
  assert.equal(
    r.stderr,
    `protocall: registry state ${foreign} is not a state file written by protocall: move it away or pass another --state\n`,
  );
  const state = join(dir, "registry.state");
  const first = await startCliServer(["registry", "serve", "--state", state]);
  try {
    const second = await runCli(["registry", "serve", "--state", state]);
    assert.equal(second.code, 1);
    assert.match(
      second.stderr,
      /^protocall: registry state .*registry\.state is in use by process \d+ \(another `protocall registry serve`\?\): stop it, or pass another --state\n$/,
    );
  } finally {
    await first.stop();
  }
});
