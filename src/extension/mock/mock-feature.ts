// The mock server in the editor: "Start Mock Server" runs `protocall mock`'s engine (core/mock/) in
// the extension host, for a source of the Services view (a workspace build, a descriptor set, a
// registry module, a server's reflection), for the workspace, or for one stub file; it serves the
// workspace's stub files (or that one file), reloading them on save. While it runs, its URL is on the
// status bar and on the context's mock handle (the Services view lists it as a server), and its calls
// show live in the Mock Calls view, each opened as a read-only JSON document. "▶ Call this stub"
// sends a stub's request part to it (starting it first when needed) through the one Send. The
// commands are listed in ../command-table.ts; each shows a failure as a notification, never a throw.
import { readFile } from "node:fs/promises";
import { Readable } from "node:stream";
import * as vscode from "vscode";
import { errorMessage, ProtocallError } from "../../core/errors";
import { callLine, type MockCall } from "../../core/mock/call-log";
import { loadMockSchema } from "../../core/mock/mock-schema";
import { type MockServer, startMockServer } from "../../core/mock/server";
import { StubSet } from "../../core/mock/stub-set";
import { isStubText } from "../../core/rpcfile/stub-syntax";
import type { SchemaSource } from "../../core/schema/types";
import { inertText } from "../../core/webhooks/inert-text";
import type { ProtocallContext } from "../context";
import type { MockInfo } from "../mock-handle";
import type { SendOutcome } from "../send/api";
import type { SendFeature } from "../send/send-feature";
import { WorkspaceSources } from "../send/workspace-sources";
import type { ServicesElement } from "../services/tree";
import { MockCallDocumentProvider, mockCallScheme, mockCallUri } from "./mock-call-document";
import { type MockCallItemView, type MockCallNode, MockCallsTree } from "./mock-calls-tree";
import { MockStatusBar } from "./mock-status-bar";
import { StubCallDocuments, stubCallScheme } from "./stub-call-document";

/** The Mock part's API (activate()'s `mock`), for other extensions and the extension-API tests. */
export interface MockApi {
  /** The running mock, or undefined. */
  current(): MockInfo | undefined;
  /** Starts the mock for a Services view source, a stub file's URI, or (none) the workspace. */
  start(from?: unknown): Promise<MockInfo>;
  stop(): Promise<void>;
  /** The calls kept, oldest first. */
  calls(): readonly MockCall[];
  /** The Mock Calls view's items, newest first. */
  items(): MockCallItemView[];
  open(id: number): Promise<vscode.TextDocument>;
  statusBar(): { text: string; tooltip: string; visible: boolean };
  /** Fires when the mock starts or stops and when a call ends (the view has been refreshed). */
  readonly onDidChange: vscode.Event<void>;
}

interface Running {
  readonly server: MockServer;
  readonly stubs: StubSet;
  readonly info: MockInfo;
  /** Closes what the schema holds open. */
  readonly release: () => Promise<void>;
}

/** The schema sources a start was asked for, with what to close when the mock stops. */
interface OpenedSchema {
  readonly sources: readonly SchemaSource[];
  readonly label: string;
  readonly release: () => Promise<void>;
}

function isSource(arg: unknown): arg is ServicesElement & { type: "source" } {
  return typeof arg === "object" && arg !== null && (arg as ServicesElement).type === "source";
}

export class MockFeature {
  readonly api: MockApi;
  private running: Running | undefined;
  private starting: Promise<MockInfo> | undefined;
  private readonly tree: MockCallsTree;
  private readonly statusBar = new MockStatusBar();
  private readonly workspace: WorkspaceSources;
  private readonly stubCalls = new StubCallDocuments();
  private readonly changed = new vscode.EventEmitter<void>();
  private readonly docChanged = new vscode.EventEmitter<vscode.Uri>();
  private pending: NodeJS.Timeout | undefined;

  constructor(
    private readonly ctx: ProtocallContext,
    private readonly send: SendFeature,
  ) {
    const calls = () => this.running?.server.calls.list() ?? [];
    this.tree = new MockCallsTree(calls);
    this.workspace = new WorkspaceSources(ctx);
    const provider = new MockCallDocumentProvider(calls);
    const docs: vscode.TextDocumentContentProvider = {
      provideTextDocumentContent: (uri) => provider.provideTextDocumentContent(uri),
      onDidChange: this.docChanged.event,
    };
    ctx.subscriptions.push(
      vscode.window.createTreeView("protocall.mockCalls", { treeDataProvider: this.tree }),
      this.tree,
      this.statusBar,
      this.workspace,
      this.changed,
      this.docChanged,
      vscode.workspace.registerTextDocumentContentProvider(mockCallScheme, docs),
      vscode.workspace.registerTextDocumentContentProvider(stubCallScheme, this.stubCalls),
      {
        dispose: () => {
          if (this.pending) clearTimeout(this.pending);
          void this.stopMock();
        },
      },
    );
    this.setRunningContext(false);
    this.api = {
      current: () => this.running?.info,
      start: (from) => this.startMock(from),
      stop: () => this.stopMock(),
      calls,
      items: () => this.tree.views(),
      open: (id) => this.openCallDocument(id),
      statusBar: () => ({
        text: this.statusBar.text,
        tooltip: this.statusBar.tooltip,
        visible: this.statusBar.visible,
      }),
      onDidChange: this.changed.event,
    };
  }

  // ---- commands ----

  /** protocall.mock.start: from a Services view source, a stub file (editor title), or the palette. */
  start(from?: unknown): Promise<MockInfo | undefined> {
    return this.guard("Start mock server", async () => {
      const info = await this.startMock(from);
      void vscode.window
        .showInformationMessage(`Protocall mock server on ${info.url} (${info.schemaLabel})`, "Copy URL")
        .then((pick) => {
          if (pick) void vscode.env.clipboard.writeText(info.url);
        });
      return info;
    });
  }

  /** protocall.mock.stop (also the status bar item). */
  stop(): Promise<void> {
    return this.guard("Stop mock server", () => this.stopMock());
  }

  /** protocall.mock.openCall: a call's click. */
  openCall(arg?: unknown): Promise<vscode.TextDocument | undefined> {
    return this.guard("Open mock call", async () => {
      const id =
        typeof arg === "number"
          ? arg
          : typeof (arg as MockCallNode)?.id === "number"
            ? (arg as MockCallNode).id
            : undefined;
      if (id === undefined) throw new ProtocallError("select a call in the Mock Calls view to open it");
      return this.openCallDocument(id);
    });
  }

  /** protocall.mock.reset: forgets the calls and starts every stub's sequence over, as the admin path does. */
  reset(): Promise<void> {
    return this.guard("Reset mock server", async () => {
      const running = this.running;
      if (!running) return;
      running.server.calls.clear();
      running.stubs.reset();
      this.showCalls();
    });
  }

  /** protocall.mock.callStub: "▶ Call this stub" — the stub's request part, sent to the mock. */
  callStub(uriArg?: unknown, indexArg?: unknown): Promise<SendOutcome | undefined> {
    return this.guard("Call stub", async () => {
      const uri =
        typeof uriArg === "string"
          ? vscode.Uri.parse(uriArg)
          : uriArg instanceof vscode.Uri
            ? uriArg
            : vscode.window.activeTextEditor?.document.uri;
      if (!uri) throw new ProtocallError("open a stub file to call one of its stubs");
      const stubFile = await vscode.workspace.openTextDocument(uri);
      // A stub being edited is served as saved: save it first, so the call meets the stub as written.
      if (stubFile.isDirty) await stubFile.save();
      const info = this.running?.info ?? (await this.startMock());
      const index = typeof indexArg === "number" ? indexArg : 0;
      const doc = await this.stubCalls.open(stubFile, index, info.url);
      if (!doc) throw new ProtocallError(`${vscode.workspace.asRelativePath(uri)} has no stub ${index + 1}`);
      return this.send.run({ document: doc, index: 0 }, { interactive: true });
    });
  }

  // ---- the mock ----

  private startMock(from?: unknown): Promise<MockInfo> {
    if (this.running) return Promise.resolve(this.running.info);
    this.starting ??= this.startNow(from).finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private async startNow(from: unknown): Promise<MockInfo> {
    // From a stub file's title bar: that file's stubs; from a request file's: the workspace's stubs.
    const given = from instanceof vscode.Uri && from.scheme === "file" ? from : undefined;
    const stubFile =
      given && isStubText(await readFile(given.fsPath, "utf8").catch(() => "")) ? given : undefined;
    const opened = await this.openSchema(isSource(from) ? from : undefined);
    try {
      const schema = await loadMockSchema(opened.sources);
      const log = (line: string) => this.ctx.log.info(`mock: ${line}`);
      const paths = stubFile ? [stubFile.fsPath] : await this.workspaceStubFiles();
      const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? process.cwd();
      const stubs = new StubSet({ paths, cwd: folder, schema, env: this.ctx.settings.connectionEnv(), log });
      const errors = await stubs.load();
      if (errors > 0) {
        // The last good set rule holds from the start: the stubs without errors serve; the editor
        // shows each problem where it is, the output lists them.
        void vscode.window.showWarningMessage(
          `Protocall mock: the stub files have ${errors} error${errors === 1 ? "" : "s"}; the files with errors are not served until they are fixed (see the Protocall output).`,
        );
      }
      const server = await startMockServer({
        schema,
        stubs,
        host: "127.0.0.1",
        port: this.ctx.settings.get("mock.port"),
        env: this.ctx.settings.connectionEnv(),
        onCall: (call) => {
          this.ctx.log.info(`mock: ${callLine(call)}`);
          this.scheduleShow();
        },
      });
      stubs.watch();
      const watcher = stubFile ? undefined : this.watchNewStubFiles(stubs, paths);
      const info: MockInfo = { url: server.url, port: server.port, schemaLabel: opened.label };
      this.running = {
        server,
        stubs,
        info,
        release: async () => {
          watcher?.dispose();
          await opened.release();
        },
      };
      const n = stubs.all().length;
      this.ctx.log.info(
        `Mock server started on ${server.url}: ${schema.serviceNames.length} service(s) of ${opened.label}, ${n} stub${n === 1 ? "" : "s"} from ${paths.length} file${paths.length === 1 ? "" : "s"}`,
      );
      this.setRunningContext(true);
      this.ctx.mock.set(info);
      this.showCalls();
      return info;
    } catch (err) {
      await opened.release();
      throw err;
    }
  }

  private async stopMock(): Promise<void> {
    const running = this.running;
    if (!running) return;
    this.running = undefined;
    running.stubs.close();
    await running.server.close();
    await running.release();
    this.ctx.log.info("Mock server stopped");
    this.setRunningContext(false);
    this.ctx.mock.set(undefined);
    this.showCalls();
  }

  /** The schema to serve: a Services view source, else the workspace's schemas. */
  private async openSchema(
    source: (ServicesElement & { type: "source" }) | undefined,
  ): Promise<OpenedSchema> {
    if (!source) {
      const lease = this.workspace.sources();
      if (lease.sources.length === 0) {
        lease.release();
        throw new ProtocallError(
          vscode.workspace.isTrusted
            ? "the workspace has no schema to serve: add .proto files or a buf.yaml, or start the mock from a source of the Services view"
            : "the workspace is in Restricted Mode: nothing is built; trust it to start the mock on its schema",
        );
      }
      return { sources: lease.sources, label: "the workspace", release: async () => lease.release() };
    }
    const info = source.info;
    if (info.error) throw new ProtocallError(`${info.label} cannot serve a mock: ${info.error}`);
    let opened: SchemaSource;
    if (info.kind === "server") {
      const { createReflectionSource } = await import("../../core/schema/reflection-client");
      const { createGrpcTransport } = await import("@connectrpc/connect-node");
      opened = createReflectionSource({
        transport: createGrpcTransport({ baseUrl: info.origin }),
        label: `reflection at ${info.origin}`,
        timeoutMs: 10_000,
      });
    } else {
      const { openSchema } = await import("../../core/schema/open-schema");
      const access = await this.ctx.registryAccess();
      opened = await openSchema(info.origin, {
        cwd: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? process.cwd(),
        stdin: Readable.from([]),
        env: this.ctx.settings.connectionEnv(),
        registryTokens: access.tokens,
        registryCas: access.cas,
      });
    }
    return { sources: [opened], label: info.label, release: () => opened.close() };
  }

  /**
   * Serving the workspace's stubs: a stub file created (or a request file turned into one) while the
   * mock runs is served from then on; the stub set's own watching covers the files it started with.
   */
  private watchNewStubFiles(stubs: StubSet, served: readonly string[]): vscode.Disposable {
    const watcher = vscode.workspace.createFileSystemWatcher("**/*.rpc");
    const initial = new Set(served);
    const added = new Set<string>();
    const seen = async (uri: vscode.Uri) => {
      const path = uri.fsPath;
      if (uri.scheme !== "file" || initial.has(path)) return;
      if (!added.has(path)) {
        if (!isStubText(await readFile(path, "utf8").catch(() => ""))) return;
        added.add(path);
        this.ctx.log.info(`mock: serving the stubs of ${vscode.workspace.asRelativePath(uri)} too`);
      }
      await stubs.update(path);
    };
    watcher.onDidCreate((uri) => void seen(uri));
    watcher.onDidChange((uri) => void seen(uri));
    watcher.onDidDelete((uri) => {
      if (added.delete(uri.fsPath)) void stubs.update(uri.fsPath);
    });
    return watcher;
  }

  /** The workspace's `.rpc` files that are stub files (they have a `>>>` answer). */
  private async workspaceStubFiles(): Promise<string[]> {
    const uris = await vscode.workspace.findFiles("**/*.rpc", "**/node_modules/**", 5000);
    const out: string[] = [];
    for (const uri of uris) {
      const text = await readFile(uri.fsPath, "utf8").catch(() => "");
      if (isStubText(text)) out.push(uri.fsPath);
    }
    return out.sort();
  }

  private async openCallDocument(id: number): Promise<vscode.TextDocument> {
    const doc = await vscode.workspace.openTextDocument(mockCallUri(id));
    await vscode.window.showTextDocument(doc, { preview: true });
    return doc;
  }

  /** Calls can come by thousands a second: the view follows 100 ms after one. */
  private scheduleShow(): void {
    this.pending ??= setTimeout(() => {
      this.pending = undefined;
      this.showCalls();
    }, 100);
  }

  private showCalls(): void {
    this.tree.refresh();
    for (const doc of vscode.workspace.textDocuments) {
      if (doc.uri.scheme === mockCallScheme) this.docChanged.fire(doc.uri);
    }
    this.statusBar.update(this.running?.info, this.running?.server.calls.list().length ?? 0);
    this.changed.fire();
  }

  /** Runs a command's work; a failure becomes an error notification (text kept inert), not a throw. */
  private async guard<R>(what: string, work: () => Promise<R>): Promise<R | undefined> {
    try {
      return await work();
    } catch (err) {
      this.ctx.log.error(`${what}: ${errorMessage(err)}`);
      void vscode.window.showErrorMessage(inertText(errorMessage(err)));
      return undefined;
    }
  }

  private setRunningContext(value: boolean): void {
    void vscode.commands.executeCommand("setContext", "protocall.mockRunning", value);
  }
}
