// The language server with a registry module as a request's schema, over a real LSP connection: an
// `.rpc` file whose `@schema` is `REMOTE/owner/module` (modules pushed by the real buf to
// `protocall registry serve`) gets diagnostics, hover and completion from the module, and so does a
// `protocall.schemas` entry naming a module. The server finds the token and trust as the CLI does
// (BUF_TOKEN, SSL_CERT_FILE) and caches the module by commit.
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { bufPath } from "../support/buf";
import { startTestRegistry, type TestRegistry, tempWorkspace } from "../support/registry";
import { examplesDir } from "../support/servers";
import { LspClient, positionOf } from "./lsp-client";

describe("language server: a registry module as the schema", { timeout: 180_000 }, () => {
  let registry: TestRegistry;
  let dir: string;
  let cache: string;
  let client: LspClient;
  let configured: LspClient;
  let editor: LspClient;

  before(async () => {
    registry = await startTestRegistry();
    const files: Record<string, string> = {
      "buf.yaml": registry.bufYaml([{ path: "proto", name: "acme/demo" }]),
    };
    for (const name of readdirSync(join(examplesDir, "proto/demo/v1"))) {
      files[`proto/demo/v1/${name}`] = readFileSync(join(examplesDir, "proto/demo/v1", name), "utf8");
    }
    const r = await registry.buf(["push", "--create", "--create-visibility", "private"], {
      cwd: tempWorkspace(files),
      token: "alice-token",
    });
    assert.equal(r.code, 0, r.stderr);
    dir = mkdtempSync(join(tmpdir(), "protocall-lsp-registry-"));
    cache = mkdtempSync(join(tmpdir(), "protocall-lsp-registry-cache-"));
    const env = { ...registry.env("alice-token"), PROTOCALL_CACHE_DIR: cache };
    // As the editor starts it: no token or CA in the environment; the sign-ins come with the settings.
    const bare = {
      ...registry.env(undefined, mkdtempSync(join(tmpdir(), "protocall-lsp-registry-buf-"))),
      SSL_CERT_FILE: undefined,
      PROTOCALL_CACHE_DIR: mkdtempSync(join(tmpdir(), "protocall-lsp-registry-cache-")),
    };
    [client, editor, configured] = await Promise.all([
      LspClient.start({ rootDir: dir, env, initializationOptions: { bufPath, workspaceBuild: false } }),
      LspClient.start({
        rootDir: dir,
        env: bare,
        initializationOptions: { bufPath, workspaceBuild: false },
        configuration: {
          workspaceBuild: false,
          registryTokens: { [registry.remote]: "alice-token" },
          registryCas: { [registry.remote]: registry.pki.ca.cert },
        },
      }),
      LspClient.start({
        rootDir: dir,
        env,
        initializationOptions: { bufPath, workspaceBuild: false },
        configuration: { schemas: [`${registry.remote}/acme/demo:main`], workspaceBuild: false },
      }),
    ]);
  });

  after(async () => {
    await Promise.all([client?.close(), configured?.close(), editor?.close()]);
    await registry?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const labels = (items: { label: string }[]) => items.map((i) => i.label);

  it("diagnoses, hovers and completes from a module named by @schema", async () => {
    const text = `###\n# @schema ${registry.remote}/acme/demo\n# @reflect false\nhttp://127.0.0.1:9/demo.v1.GreetService/Greet\n\n{"nam": "x"}\n`;
    const uri = pathToFileURL(join(dir, "module.rpc")).href;
    client.open(uri, text);
    const diagnostics = await client.diagnosticsFor(uri, 1);
    assert.ok(
      diagnostics.some((d) => d.message.includes('unknown field "nam" in message demo.v1.GreetRequest')),
      diagnostics.map((d) => d.message).join("\n"),
    );
    const hover = await client.hover(uri, positionOf(text, "Greet\n", 1));
    assert.ok(hover);
    assert.match((hover.contents as { value: string }).value, /GreetService\.Greet/);
    const methods = await client.completion(uri, positionOf(text, "Greet\n", 2));
    assert.ok(labels(methods).includes("Greet"), labels(methods).join(", "));
    const fields = await client.completion(uri, positionOf(text, '"nam"', 2));
    assert.ok(labels(fields).includes("name"), labels(fields).join(", "));
    assert.ok(readdirSync(join(cache, "modules", "v1")).length > 0, "the module is cached");
  });

  it("takes the token and CA of the editor's sign-in from the settings", async () => {
    const text = `###\n# @schema ${registry.remote}/acme/demo\n# @reflect false\nhttp://127.0.0.1:9/demo.v1.GreetService/Greet\n\n{"nam": "x"}\n`;
    const uri = pathToFileURL(join(dir, "signed-in.rpc")).href;
    editor.open(uri, text);
    const diagnostics = await editor.diagnosticsFor(uri, 1);
    assert.ok(
      diagnostics.some((d) => d.message.includes('unknown field "nam" in message demo.v1.GreetRequest')),
      diagnostics.map((d) => d.message).join("\n"),
    );
  });

  it("reads a module listed in protocall.schemas", async () => {
    const text = '###\n# @reflect false\nhttp://127.0.0.1:9/demo.v1.GreetService/Greet\n\n{"nam": "x"}\n';
    const uri = pathToFileURL(join(dir, "setting.rpc")).href;
    configured.open(uri, text);
    const diagnostics = await configured.diagnosticsFor(uri, 1);
    assert.ok(
      diagnostics.some((d) => d.message.includes('unknown field "nam" in message demo.v1.GreetRequest')),
      diagnostics.map((d) => d.message).join("\n"),
    );
  });
});
