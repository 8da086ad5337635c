// The language server for .rpc files over any LSP connection: documents, settings, watched files,
// and the features (diagnostics, quick fixes, completion, hover, code lenses, document symbols).
// Work that needs a schema runs asynchronously; results are published when ready and dropped when
// the document has changed since.

import { isAbsolute, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import {
  CodeActionKind,
  type Connection,
  type Diagnostic,
  DiagnosticSeverity,
  DidChangeWatchedFilesNotification,
  type InitializeParams,
  type InitializeResult,
  TextDocumentSyncKind,
  TextDocuments,
} from "vscode-languageserver";
import { TextDocument } from "vscode-languageserver-textdocument";
import { Analyzer } from "../core/analysis/analysis";
import { computeDiagnostics } from "../core/analysis/diagnostics";
import { SchemaStore } from "../core/analysis/schema-store";
import { defaultSettings, mergeSettings } from "../core/analysis/settings";
import { errorMessage } from "../core/errors";
import { provideRegistryModules } from "../core/registry/provide";
import { codeActions } from "./code-actions";
import { complete } from "./completion";
import { hover } from "./hover";
import { documentLenses, documentSymbols } from "./lenses";
import { refreshRequest } from "./protocol";
import { registerServicesRequests } from "./services-requests";

/** Files whose change can change a schema or a variable. */
const watched = [
  "**/*.proto",
  "**/buf.yaml",
  "**/buf.work.yaml",
  "**/buf.lock",
  "**/*.binpb",
  "**/*.env.json",
  "**/.env",
];
const watchedPattern = /(\.proto|buf\.yaml|buf\.work\.yaml|buf\.lock|\.binpb|\.env\.json|\.env)$/;

/** How long typing may pause before a document is checked. */
const debounceMs = 40;

export function startLanguageServer(connection: Connection): void {
  provideRegistryModules();
  const documents = new TextDocuments(TextDocument);
  const log = (line: string) => connection.console.log(line);
  let initialSettings = defaultSettings();
  const store = new SchemaStore(initialSettings, log);
  const analyzer = new Analyzer(store);
  const timers = new Map<string, NodeJS.Timeout>();
  /** The latest check of each document; only its results are published. */
  const rounds = new Map<string, number>();
  let configurationSupport = false;
  let watchRegistration = false;
  const completionOptions = { editRangeDefault: false };
  let folders: string[] = [];
  let folderEvents = false;
  const check = (doc: TextDocument) => {
    const old = timers.get(doc.uri);
    if (old) clearTimeout(old);
    timers.set(
      doc.uri,
      setTimeout(() => {
        timers.delete(doc.uri);
        const version = doc.version;
        const round = (rounds.get(doc.uri) ?? 0) + 1;
        rounds.set(doc.uri, round);
        computeDiagnostics(analyzer, store, doc).then(
          (diagnostics) => {
            // A newer version, or a newer check of this one (the schema changed), is on its way:
            // these results are stale.
            if (documents.get(doc.uri)?.version !== version || rounds.get(doc.uri) !== round) return;
            void connection.sendDiagnostics({ uri: doc.uri, version, diagnostics });
          },
          (err) => log(`checking ${doc.uri} failed: ${errorMessage(err)}`),
        );
      }, debounceMs),
    );
  };
  const publishCompilerErrors = compilerErrorPublisher(connection, store);
  const checkAll = () => {
    analyzer.reset();
    for (const doc of documents.all()) check(doc);
    publishCompilerErrors().catch((err) => log(`building the workspace failed: ${errorMessage(err)}`));
  };

  const loadConfiguration = async () => {
    if (!configurationSupport) return;
    try {
      const section = await connection.workspace.getConfiguration("protocall");
      store.setSettings(mergeSettings(initialSettings, section));
    } catch (err) {
      log(`cannot read the configuration: ${errorMessage(err)}`);
    }
  };

  connection.onInitialize((params: InitializeParams): InitializeResult => {
    initialSettings = mergeSettings(defaultSettings(), params.initializationOptions);
    store.setSettings(initialSettings);
    folders = (params.workspaceFolders ?? [])
      .map((f) => f.uri)
      .concat(params.workspaceFolders?.length ? [] : params.rootUri ? [params.rootUri] : [])
      .filter((u) => u.startsWith("file:"))
      .map((u) => fileURLToPath(u));
    if (folders.length === 0 && params.rootPath) folders.push(params.rootPath);
    store.setFolders(folders);
    folderEvents = params.capabilities.workspace?.workspaceFolders === true;
    configurationSupport = params.capabilities.workspace?.configuration === true;
    watchRegistration = params.capabilities.workspace?.didChangeWatchedFiles?.dynamicRegistration === true;
    completionOptions.editRangeDefault =
      params.capabilities.textDocument?.completion?.completionList?.itemDefaults?.includes("editRange") ===
      true;
    return {
      capabilities: {
        textDocumentSync: TextDocumentSyncKind.Incremental,
        completionProvider: { triggerCharacters: ["@", '"', "/", ":", "{", ",", " "] },
        hoverProvider: true,
        codeActionProvider: { codeActionKinds: [CodeActionKind.QuickFix] },
        codeLensProvider: { resolveProvider: false },
        documentSymbolProvider: true,
        workspace: { workspaceFolders: { supported: true, changeNotifications: true } },
      },
      serverInfo: { name: "protocall" },
    };
  });

  connection.onInitialized(() => {
    if (folderEvents) {
      connection.workspace.onDidChangeWorkspaceFolders((e) => {
        const removed = new Set(e.removed.map((f) => f.uri));
        folders = folders.filter((f) => !removed.has(pathToFileURL(f).href));
        for (const f of e.added) if (f.uri.startsWith("file:")) folders.push(fileURLToPath(f.uri));
        store.setFolders(folders);
        checkAll();
      });
    }
    if (watchRegistration) {
      void connection.client.register(DidChangeWatchedFilesNotification.type, {
        watchers: watched.map((globPattern) => ({ globPattern })),
      });
    }
    if (configurationSupport) void loadConfiguration().then(checkAll);
    // Start the workspace build now, so the first request does not wait for it.
    publishCompilerErrors().catch((err) => log(`building the workspace failed: ${errorMessage(err)}`));
  });

  connection.onDidChangeConfiguration(async (change) => {
    if (configurationSupport) await loadConfiguration();
    else
      store.setSettings(
        mergeSettings(initialSettings, (change.settings as { protocall?: unknown })?.protocall),
      );
    checkAll();
  });

  connection.onDidChangeWatchedFiles((params) => {
    if (!params.changes.some((c) => watchedPattern.test(c.uri))) return;
    store.invalidate(false);
    checkAll();
  });

  registerServicesRequests(connection, { store, folders: () => folders });

  connection.onRequest(refreshRequest, () => {
    store.invalidate(true);
    checkAll();
    return null;
  });

  documents.onDidOpen((e) => check(e.document));
  documents.onDidChangeContent((e) => check(e.document));
  documents.onDidClose((e) => {
    const t = timers.get(e.document.uri);
    if (t) clearTimeout(t);
    timers.delete(e.document.uri);
    analyzer.forget(e.document.uri);
    rounds.delete(e.document.uri);
    void connection.sendDiagnostics({ uri: e.document.uri, diagnostics: [] });
  });

  registerDocumentRequests(connection, documents, analyzer, store, log, completionOptions);

  connection.onShutdown(async () => {
    for (const t of timers.values()) clearTimeout(t);
    await store.close();
  });

  documents.listen(connection);
  connection.listen();
}

/**
 * Compiler errors of the workspace build go to the .proto files they are about; a file whose errors
 * are gone is cleared. Returns the function that publishes the latest build's (an older build's
 * results, arriving late, are dropped).
 */
function compilerErrorPublisher(connection: Connection, store: SchemaStore): () => Promise<void> {
  let protoUris = new Set<string>();
  let compilerRound = 0;
  return async () => {
    const round = ++compilerRound;
    const errors = await store.compilerErrors();
    if (round !== compilerRound) return;
    const byUri = new Map<string, Diagnostic[]>();
    for (const e of errors) {
      for (const d of e.diagnostics) {
        const uri = pathToFileURL(isAbsolute(d.file) ? d.file : resolve(d.file)).href;
        const line = Math.max(d.line - 1, 0);
        const character = Math.max(d.column - 1, 0);
        const end =
          d.endLine !== undefined && d.endColumn !== undefined
            ? { line: d.endLine - 1, character: d.endColumn - 1 }
            : { line, character: character + 1 };
        const list = byUri.get(uri) ?? [];
        list.push({
          range: { start: { line, character }, end },
          severity: DiagnosticSeverity.Error,
          message: d.message,
          source: "buf",
        });
        byUri.set(uri, list);
      }
    }
    for (const uri of protoUris)
      if (!byUri.has(uri)) void connection.sendDiagnostics({ uri, diagnostics: [] });
    for (const [uri, diagnostics] of byUri) void connection.sendDiagnostics({ uri, diagnostics });
    protoUris = new Set(byUri.keys());
  };
}

/** The requests about one open document: hover, completion, quick fixes, code lenses, symbols. */
function registerDocumentRequests(
  connection: Connection,
  documents: TextDocuments<TextDocument>,
  analyzer: Analyzer,
  store: SchemaStore,
  log: (line: string) => void,
  completionOptions: { editRangeDefault: boolean },
): void {
  connection.onHover(async (params) => {
    const doc = documents.get(params.textDocument.uri);
    if (!doc) return null;
    try {
      return await hover(analyzer, store, doc, params.position);
    } catch (err) {
      log(`hover failed: ${errorMessage(err)}`);
      return null;
    }
  });

  connection.onCompletion(async (params) => {
    const doc = documents.get(params.textDocument.uri);
    if (!doc) return [];
    try {
      return await complete(analyzer, store, doc, params.position, completionOptions);
    } catch (err) {
      log(`completion failed: ${errorMessage(err)}`);
      return [];
    }
  });

  connection.onCodeAction((params) => codeActions(params));

  connection.onCodeLens((params) => {
    const doc = documents.get(params.textDocument.uri);
    return doc ? documentLenses(doc.uri, doc.getText(), () => analyzer.get(doc).file) : [];
  });

  connection.onDocumentSymbol((params) => {
    const doc = documents.get(params.textDocument.uri);
    return doc ? documentSymbols(analyzer.get(doc).file) : [];
  });
}
