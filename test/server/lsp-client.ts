// An LSP client for the tests: starts `node dist/server.js --stdio` and talks to it with
// vscode-jsonrpc over the child's pipes. Every wait is bounded.
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import {
  createMessageConnection,
  type MessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
} from "vscode-jsonrpc/node";
import type {
  CodeLens,
  CompletionItem,
  CompletionList,
  Diagnostic,
  DocumentSymbol,
  Hover,
  Position,
  PublishDiagnosticsParams,
} from "vscode-languageserver-protocol";
import { repoRoot } from "../support/cli";

export const serverPath = join(repoRoot, "dist/server.js");

export interface LspClientOptions {
  rootDir: string;
  initializationOptions?: unknown;
  /** Offer workspace/configuration and answer it with this `protocall` section. */
  configuration?: unknown;
  /** Declare support for a completion list's default edit range (as VS Code does). */
  itemDefaults?: boolean;
  /** Declare workspace folder support (then the server follows didChangeWorkspaceFolders). */
  workspaceFolders?: boolean;
  /** Added to the server's environment (tokens, trust and cache of registry modules). */
  env?: Record<string, string | undefined>;
}

export class LspClient {
  readonly connection: MessageConnection;
  private readonly child: ChildProcess;
  private readonly diagnostics = new Map<string, PublishDiagnosticsParams[]>();
  private readonly waiters: (() => void)[] = [];
  readonly stderr: string[] = [];
  readonly logs: string[] = [];

  private constructor(child: ChildProcess) {
    this.child = child;
    this.connection = createMessageConnection(
      new StreamMessageReader(child.stdout as NodeJS.ReadableStream),
      new StreamMessageWriter(child.stdin as NodeJS.WritableStream),
    );
    child.stderr?.on("data", (c: Buffer) => this.stderr.push(c.toString()));
    this.connection.onNotification("textDocument/publishDiagnostics", (p: PublishDiagnosticsParams) => {
      const list = this.diagnostics.get(p.uri) ?? [];
      list.push(p);
      this.diagnostics.set(p.uri, list);
      for (const w of this.waiters.splice(0)) w();
    });
    this.connection.onNotification("window/logMessage", (p: { message: string }) =>
      this.logs.push(p.message),
    );
    this.connection.onRequest("client/registerCapability", () => null);
    this.connection.listen();
  }

  static async start(options: LspClientOptions): Promise<LspClient> {
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const [k, v] of Object.entries(options.env ?? {})) {
      if (v === undefined) delete env[k];
      else env[k] = v;
    }
    const child = spawn(process.execPath, [serverPath, "--stdio"], {
      cwd: options.rootDir,
      env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    const client = new LspClient(child);
    if (options.configuration !== undefined) {
      client.connection.onRequest("workspace/configuration", (p: { items: unknown[] }) =>
        p.items.map(() => options.configuration),
      );
    }
    const rootUri = pathToFileURL(options.rootDir).href;
    await client.request("initialize", {
      processId: process.pid,
      rootUri,
      workspaceFolders: [{ uri: rootUri, name: "test" }],
      initializationOptions: options.initializationOptions,
      capabilities: {
        workspace: {
          configuration: options.configuration !== undefined,
          workspaceFolders: options.workspaceFolders === true,
          didChangeWatchedFiles: { dynamicRegistration: true },
        },
        textDocument: {
          hover: { contentFormat: ["markdown"] },
          completion: options.itemDefaults ? { completionList: { itemDefaults: ["editRange"] } } : undefined,
        },
      },
    });
    client.connection.sendNotification("initialized", {});
    return client;
  }

  /** A request bounded by a timeout. */
  async request<T>(method: string, params: unknown, timeoutMs = 30_000): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${method} got no answer in ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      return await Promise.race([this.connection.sendRequest<T>(method, params), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  open(uri: string, text: string, version = 1): void {
    void this.connection.sendNotification("textDocument/didOpen", {
      textDocument: { uri, languageId: "rpc", version, text },
    });
  }

  /** Replaces the whole text. */
  change(uri: string, text: string, version: number): void {
    void this.connection.sendNotification("textDocument/didChange", {
      textDocument: { uri, version },
      contentChanges: [{ text }],
    });
  }

  /** Waits for the diagnostics of a version of a document. */
  async diagnosticsFor(uri: string, version: number, timeoutMs = 30_000): Promise<Diagnostic[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.diagnostics.get(uri)?.find((p) => p.version === version);
      if (found) return found.diagnostics;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no diagnostics for ${uri} version ${version} within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  /** All diagnostics notifications received for a document, in order. */
  published(uri: string): PublishDiagnosticsParams[] {
    return this.diagnostics.get(uri) ?? [];
  }

  hover(uri: string, position: Position): Promise<Hover | null> {
    return this.request("textDocument/hover", { textDocument: { uri }, position });
  }

  async completion(uri: string, position: Position): Promise<CompletionItem[]> {
    const r = await this.completionList(uri, position);
    return Array.isArray(r) ? r : r.items;
  }

  async completionList(uri: string, position: Position): Promise<CompletionItem[] | CompletionList> {
    const r = await this.request<CompletionItem[] | CompletionList | null>("textDocument/completion", {
      textDocument: { uri },
      position,
    });
    return r ?? [];
  }

  codeLenses(uri: string): Promise<CodeLens[]> {
    return this.request("textDocument/codeLens", { textDocument: { uri } });
  }

  symbols(uri: string): Promise<DocumentSymbol[]> {
    return this.request("textDocument/documentSymbol", { textDocument: { uri } });
  }

  /** Shuts the server down and waits for it to exit (killing it if it does not). */
  async close(): Promise<void> {
    const exited = new Promise<void>((resolve) => {
      if (this.child.exitCode !== null || this.child.signalCode !== null) resolve();
      else this.child.once("exit", () => resolve());
    });
    try {
      await this.request("shutdown", null, 5000);
      void this.connection.sendNotification("exit");
    } catch {
      // killed below
    }
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 3000);
    await exited;
    clearTimeout(timer);
    this.connection.dispose();
  }
}

/** The position of the `nth` occurrence (from 0) of `needle` in `text`, plus `delta` characters. */
export function positionOf(text: string, needle: string, delta = 0, nth = 0): Position {
  let index = -1;
  for (let i = 0; i <= nth; i++) {
    index = text.indexOf(needle, index + 1);
    if (index < 0) throw new Error(`${needle} not found (occurrence ${nth})`);
  }
  index += delta;
  const before = text.slice(0, index);
  const line = before.split("\n").length - 1;
  return { line, character: index - (before.lastIndexOf("\n") + 1) };
}
