// `{{$file ./path}}` in request bodies, through `protocall run` against the real demo server's Echo:
// a binary file in a bytes field arrives byte-identical (the echo's base64 decodes to the file), a
// text file fills a string field, and misuse (a missing file, an int field, a header) is a clear error.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { runCli } from "../support/cli";
import { type DemoServer, startDemoServer } from "../support/servers";

const dir = mkdtempSync(join(tmpdir(), "protocall-file-values-"));
let server: DemoServer;

before(async () => {
  server = await startDemoServer();
});

after(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

let n = 0;
function workspace(rpc: string, files: Record<string, string | Buffer>): string {
  const root = join(dir, `ws${++n}`);
  mkdirSync(join(root, ".git"), { recursive: true });
  mkdirSync(join(root, "data"), { recursive: true });
  for (const [name, content] of Object.entries(files)) writeFileSync(join(root, name), content);
  writeFileSync(join(root, "requests.rpc"), rpc.replaceAll("HOST", server.url));
  return root;
}
const run = (root: string) => runCli(["run", "requests.rpc"], { cwd: root, timeoutMs: 60_000 });

describe("{{$file}} in request bodies", { timeout: 120_000 }, () => {
  test("a binary file in a bytes field arrives byte-identical; a text file fills a string field", async () => {
    // Every byte value, and bytes that are not UTF-8.
    const blob = Buffer.concat([Buffer.from(Array.from({ length: 256 }, (_, i) => i)), randomBytes(4096)]);
    const root = workspace(
      `HOST/demo.v1.DemoService/Echo

{"data": "{{$file ./data/blob.bin}}", "text": "text: {{$file data/note.txt}}"}
`,
      { "data/blob.bin": blob, "data/note.txt": 'héllo "quoted"\nline 2' },
    );
    const r = await run(root);
    assert.equal(r.code, 0, r.stderr);
    const echoed = JSON.parse(r.stdout) as { data: string; text: string };
    assert.ok(Buffer.from(echoed.data, "base64").equals(blob), "the bytes came back as sent");
    assert.equal(echoed.text, 'text: héllo "quoted"\nline 2');
  });

  test("a missing file, a field that is not string or bytes, and a header are clear errors", async () => {
    const missing = await run(
      workspace(`HOST/demo.v1.DemoService/Echo\n\n{"data": "{{$file ./nope.bin}}"}\n`, {}),
    );
    assert.equal(missing.code, 1);
    assert.match(
      missing.stderr,
      /requests\.rpc:3:1: \{\{\$file \.\/nope\.bin\}\}: no such file .*nope\.bin; the path is relative to the \.rpc file/,
    );

    const wrong = await run(
      workspace(`HOST/demo.v1.DemoService/Echo\n\n{"int32Value": "{{$file ./n.txt}}"}\n`, { "n.txt": "3" }),
    );
    assert.notEqual(wrong.code, 0);
    assert.match(
      wrong.stderr,
      /\{\{\$file\}\} can fill only a string or bytes field, and demo\.v1\.Everything\.int32_value is not a string or bytes field/,
    );

    const header = await run(
      workspace(`HOST/demo.v1.DemoService/Echo\nx-file: {{$file ./n.txt}}\n\n{}\n`, { "n.txt": "3" }),
    );
    assert.equal(header.code, 1);
    assert.match(header.stderr, /\{\{\$file \.\/n\.txt\}\} goes in a request body's JSON string/);
  });
});
