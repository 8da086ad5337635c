// The workspace build's compiler follows the settings, over a real LSP connection: buf by default,
// protoc when `compiler` is protoc (its own diagnostics on the .proto file), and a clear problem when
// the configured protoc does not exist.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { bufPath } from "../support/buf";
import { LspClient } from "./lsp-client";
import { createWorkspace, shopProto } from "./workspace";

const protoc = execFileSync("sh", ["-c", "command -v protoc"], { encoding: "utf8" }).trim();

async function protoErrors(client: LspClient, uri: string): Promise<string[]> {
  const deadline = Date.now() + 30_000;
  const latest = () => client.published(uri).at(-1)?.diagnostics;
  while (!latest()?.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  return (latest() ?? []).map((d) => d.message);
}

describe("workspace build compiler setting", { timeout: 120_000 }, () => {
  let dir: string | undefined;
  let client: LspClient | undefined;
  afterEach(async () => {
    await client?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function start(settings: Record<string, unknown>): Promise<string> {
    dir = createWorkspace();
    const protoPath = join(dir, "proto/acme/v1/shop.proto");
    writeFileSync(protoPath, shopProto.replace("string id = 1;", "strin id = 1;"));
    client = await LspClient.start({ rootDir: dir, initializationOptions: { bufPath, ...settings } });
    // An .rpc file makes the server build the workspace.
    client.open(
      pathToFileURL(join(dir, "a.rpc")).href,
      "###\nhttp://127.0.0.1:9/acme.v1.ShopService/PlaceOrder\n",
    );
    return pathToFileURL(protoPath).href;
  }

  it("builds with buf by default", async () => {
    const uri = await start({});
    const errors = await protoErrors(client as LspClient, uri);
    assert.ok(
      errors.some((m) => /cannot find `strin`/.test(m)),
      errors.join("\n"),
    );
  });

  it("builds with protoc when asked", async () => {
    const uri = await start({ compiler: "protoc", protocPath: protoc });
    const errors = await protoErrors(client as LspClient, uri);
    assert.ok(
      errors.some((m) => /"strin" is not defined/.test(m)),
      errors.join("\n"),
    );
  });

  it("names a configured protoc that does not exist", async () => {
    await start({ compiler: "protoc", protocPath: "/nonexistent/protoc" });
    const rpc = pathToFileURL(join(dir as string, "b.rpc")).href;
    (client as LspClient).open(
      rpc,
      "###\n# @reflect false\nhttp://127.0.0.1:9/acme.v1.ShopService/PlaceOrder\n",
    );
    const diagnostics = await (client as LspClient).diagnosticsFor(rpc, 1);
    const text = diagnostics.map((d) => d.message).join("\n");
    assert.match(text, /the configured protoc \/nonexistent\/protoc does not exist; fix its path/);
  });
});
