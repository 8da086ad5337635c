// "Send" and its companions: protocall.send (CodeLens "▶ Send", Ctrl/Cmd+Alt+R, the palette), the
// response panel and its history, the verbose transcript in the output channel (secrets redacted),
// "Copy as" protocall curl / buf curl / grpcurl, and the environment status bar. Requests run in the
// extension host through the core's call session (no child process), which keeps connections and
// schemas warm between sends.
import { existsSync, statSync } from "node:fs";
import { homedir } from "node:os";
import * as vscode from "vscode";
import { errorMessage } from "../../core/errors";
import type { CallResult, CallSession } from "../../core/invoke/call-session";
import type { CurlOptions, Protocol } from "../../core/invoke/options";
import { redactSecrets } from "../../core/invoke/redact";
import {
  type CopiedCommand,
  copyAsBufCurl,
  copyAsGrpcurl,
  copyAsProtocallCurl,
} from "../../core/rpcfile/copy-as";
import { parseRpcFile } from "../../core/rpcfile/parse";
import { type PreparedSend, prepareSend } from "../../core/rpcfile/prepare-send";
import { requestAt } from "../../core/rpcfile/request-at";
import { type PanelAction, ResponsePanel, type ResponsePanelState } from "../response/panel";
import type { ResponseEntry } from "../response/render";
import type { ExtensionShared } from "../shared";
import { createEnvironmentStatus, workspaceEnvironmentFile } from "./environment-status";
import { WorkspaceSources } from "./workspace-sources";

/** A call still running after this long shows a cancellable progress notification. */
const NOTIFY_AFTER_MS = 700;

export type CopyFormat = "protocall" | "buf" | "grpcurl";

/** What one "Send" did. */
export interface SendOutcome {
  /** Whether the request went out (false: a problem in the request, or the user declined). */
  sent: boolean;
  /** The panel entry (also for requests that were not sent: it lists the problems). */
  entry?: ResponseEntry;
  result?: CallResult;
  /** Why it was not sent. */
  problems: string[];
}

/**
 * The API returned by registerSend (activate()'s `send`). protocall.send also returns the
 * SendOutcome, so `await vscode.commands.executeCommand("protocall.send", uri, index)` gives the
 * result shown in the panel; the copy commands return the copied command line.
 */
export interface SendApi {
  send(uri?: string | vscode.Uri, requestIndex?: number): Promise<SendOutcome | undefined>;
  copyAs(format: CopyFormat, uri?: string | vscode.Uri, requestIndex?: number): Promise<string | undefined>;
  /** What the response panel shows now. */
  panel(): ResponsePanelState;
  /** The responses kept for a request, newest first. */
  history(uri: string | vscode.Uri, requestIndex: number): ResponseEntry[];
  /** Forgets connections and schemas (the next send dials and resolves again). */
  refresh(): Promise<void>;
}

interface Target {
  document: vscode.TextDocument;
  index: number;
}

/** Registers this part's commands and views; returns its API (part of activate()'s ProtocallApi). */
export function registerSend(shared: ExtensionShared): SendApi {
  const { context, log } = shared;
  const version = (context.extension?.packageJSON as { version?: string } | undefined)?.version ?? "0.0.0";
  const workspace = new WorkspaceSources(log);
  // The call engine (Connect, HTTP/2, TLS) loads on the first send, not at activation.
  let session: CallSession | undefined;
  let loading: Promise<CallSession> | undefined;
  const callSession = (): Promise<CallSession> => {
    loading ??= import("../../core/invoke/call-session").then(({ createCallSession }) => {
      session = createCallSession({
        product: `protocall/${version}`,
        fallbackSources: () => workspace.sources(),
        reflectionTimeoutMs: () =>
          Math.max(
            100,
            Math.round(
              vscode.workspace.getConfiguration("protocall").get<number>("reflectionTimeout", 5) * 1000,
            ),
          ),
      });
      return session;
    });
    return loading;
  };
  const histories = new Map<string, ResponseEntry[]>();
  const running = new Map<number, AbortController>();
  const confirmed = new Set<string>();
  let nextId = 1;
  let shownKey: string | undefined;

  const panel = new ResponsePanel(context.extensionUri, (action, entry) => void onPanelAction(action, entry));
  const status = createEnvironmentStatus();
  context.subscriptions.push(panel, status, workspace, {
    dispose: () => {
      for (const c of running.values()) c.abort();
      void session?.close();
    },
  });

  const keyOf = (document: vscode.TextDocument, index: number) => {
    const request = parseRpcFile(document.getText()).requests[index];
    return `${document.uri.toString()}#${request?.name?.text ?? index}`;
  };

  const historySize = () =>
    Math.max(
      1,
      Math.min(200, vscode.workspace.getConfiguration("protocall").get<number>("history.size", 20)),
    );

  const addToHistory = (key: string, entry: ResponseEntry) => {
    const list = histories.get(key) ?? [];
    list.unshift(entry);
    list.length = Math.min(list.length, historySize());
    histories.set(key, list);
    shownKey = key;
    panel.show(entry, { index: 0, count: list.length });
  };

  async function onPanelAction(action: PanelAction, entry: ResponseEntry | undefined): Promise<void> {
    if (!entry) return;
    if (action === "cancel") {
      running.get(entry.id)?.abort();
      return;
    }
    if (action === "older" || action === "newer") {
      const list = shownKey ? histories.get(shownKey) : undefined;
      if (!list) return;
      const at = list.findIndex((e) => e.id === entry.id);
      const to = action === "older" ? at + 1 : at - 1;
      if (at < 0 || to < 0 || to >= list.length) return;
      panel.show(list[to], { index: to, count: list.length });
      return;
    }
    const doc = panel.document();
    if (!doc) return;
    if (action === "copy") {
      await vscode.env.clipboard.writeText(doc.text);
      void vscode.window.setStatusBarMessage("Protocall: response copied", 3000);
    } else if (action === "open") {
      const opened = await vscode.workspace.openTextDocument({ content: doc.text, language: doc.language });
      await vscode.window.showTextDocument(opened, { viewColumn: vscode.ViewColumn.Active, preview: false });
    } else if (action === "save") {
      const name = `${entry.requestLabel.replace(/[^\w.-]+/g, "-").replace(/^-+|-+$/g, "") || "response"}.${doc.language === "json" ? "json" : "txt"}`;
      const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
      const uri = await vscode.window.showSaveDialog({
        defaultUri: folder ? vscode.Uri.joinPath(folder, name) : undefined,
        filters: doc.language === "json" ? { JSON: ["json"] } : { Text: ["txt"] },
        title: "Save Response",
      });
      if (uri) await vscode.workspace.fs.writeFile(uri, new TextEncoder().encode(doc.text));
    }
  }

  /** The document and request a command is about, or undefined when there is none (after saying so). */
  async function resolveTarget(uriArg: unknown, indexArg: unknown): Promise<Target | undefined> {
    let document: vscode.TextDocument | undefined;
    const uri =
      typeof uriArg === "string"
        ? vscode.Uri.parse(uriArg)
        : uriArg instanceof vscode.Uri
          ? uriArg
          : undefined;
    if (uri) document = await vscode.workspace.openTextDocument(uri);
    const editor = vscode.window.activeTextEditor;
    if (!document && editor?.document.languageId === "rpc") document = editor.document;
    if (!document) {
      void vscode.window.showWarningMessage("Protocall: open a .rpc request file to send a request from it.");
      return undefined;
    }
    if (typeof indexArg === "number") return { document, index: indexArg };
    const file = parseRpcFile(document.getText());
    if (file.requests.length === 0) {
      void vscode.window.showWarningMessage(
        `Protocall: ${vscode.workspace.asRelativePath(document.uri)} holds no request; write a URL after ###.`,
      );
      return undefined;
    }
    if (editor && editor.document === document) {
      const at = requestAt(file, { line: editor.selection.active.line, character: 0 });
      if (at) return { document, index: at.index };
    }
    if (file.requests.length === 1) return { document, index: 0 };
    const picked = await vscode.window.showQuickPick(
      file.requests.map((r) => ({
        label: r.name?.text ?? `Request ${r.index + 1}`,
        description: r.url?.text,
        detail: `line ${(r.requestLine ?? r.range).start.line + 1}`,
        index: r.index,
      })),
      { title: "Protocall: Which request?", placeHolder: "The cursor is not inside a request" },
    );
    return picked ? { document, index: picked.index } : undefined;
  }

  /** Prepares the request with the settings of its folder; says what is wrong when it cannot. */
  function prepare(target: Target): PreparedSend | { error: string } {
    const { document, index } = target;
    const config = vscode.workspace.getConfiguration("protocall", document.uri);
    const envSetting = config.get<string>("envFile", "");
    try {
      return prepareSend({
        text: document.getText(),
        filePath: document.uri.fsPath,
        requestIndex: index,
        environment: config.get<string>("environment", ""),
        envFile: envSetting ? workspaceEnvironmentFile(document.uri) : undefined,
        processEnv: process.env,
        defaultProtocol: config.get<Protocol>("protocol", "connect"),
        defaultTimeoutSeconds: config.get<number>("timeout", 0),
      });
    } catch (err) {
      return { error: errorMessage(err) };
    }
  }

  /** In a restricted workspace: schemas that need the compiler are refused; nothing is built. */
  function restrictedProblem(o: CurlOptions): string | undefined {
    if (vscode.workspace.isTrusted) return undefined;
    for (const s of o.schemas) {
      const compiled = s.endsWith(".proto") || (existsSync(s) && statSync(s).isDirectory());
      if (compiled) {
        return `@schema ${s} needs the compiler, which does not run in Restricted Mode; trust the workspace, or use a descriptor-set file`;
      }
    }
    return undefined;
  }

  const notSent = (target: Target | undefined, label: string, problems: string[]): SendOutcome => {
    const entry: ResponseEntry = {
      id: nextId++,
      requestLabel: label,
      startedAt: Date.now(),
      state: "not-sent",
      headers: [],
      messages: [],
      problems,
    };
    if (target) addToHistory(keyOf(target.document, target.index), entry);
    log.warn(`Not sent: ${label}: ${problems.join("; ")}`);
    const more = problems.length > 1 ? ` (and ${problems.length - 1} more)` : "";
    void vscode.window.showErrorMessage(`Protocall: ${label} was not sent: ${problems[0]}${more}`);
    return { sent: false, entry, problems };
  };

  async function send(uriArg?: unknown, indexArg?: unknown): Promise<SendOutcome | undefined> {
    const target = await resolveTarget(uriArg, indexArg);
    if (!target) return undefined;
    const prepared = prepare(target);
    if ("error" in prepared) return notSent(target, `request ${target.index + 1}`, [prepared.error]);
    if (!prepared.options) {
      return notSent(
        target,
        prepared.label,
        prepared.problems.map((p) => p.text),
      );
    }
    const o = prepared.options;
    const restricted = restrictedProblem(o);
    if (restricted) return notSent(target, prepared.label, [restricted]);
    const key = keyOf(target.document, target.index);
    if (!vscode.workspace.isTrusted) {
      const what = `${key}\n${o.url ?? ""}`;
      if (!confirmed.has(what)) {
        const answer = await vscode.window.showWarningMessage(
          `Send "${prepared.label}" to ${o.url ?? "(no URL)"}?`,
          {
            modal: true,
            detail:
              "This workspace is in Restricted Mode: Protocall sends a request only when you confirm it.",
          },
          "Send",
        );
        if (answer !== "Send") return { sent: false, problems: ["not confirmed"] };
        confirmed.add(what);
      }
    }

    const entry: ResponseEntry = {
      id: nextId++,
      requestLabel: prepared.label,
      url: o.url,
      protocol: o.protocol,
      startedAt: Date.now(),
      state: "running",
      headers: [],
      messages: [],
    };
    addToHistory(key, entry);
    const controller = new AbortController();
    running.set(entry.id, controller);
    log.info(
      `Send ${prepared.label}: ${redactSecrets(copyAsProtocallCurl({ ...o, verbose: true }).command)}`,
    );
    const call = callSession().then((session) =>
      session.call(
        o,
        { cwd: prepared.baseDir, env: process.env, homedir: homedir() },
        {
          log: (line) => log.info(redactSecrets(line)),
          method: (m) => {
            entry.method = m.name;
            panel.update(entry);
          },
          headers: (h) => {
            entry.headers = h;
            panel.update(entry);
          },
          message: (json, i) => {
            entry.messages.push(json);
            panel.appendMessage(entry, i);
            // At most a few progress updates a second, however fast a stream is.
            const now = Date.now();
            if (report && now - reported >= 200) {
              reported = now;
              report(`${i + 1} message${i === 0 ? "" : "s"}`);
            }
          },
        },
        controller.signal,
      ),
    );
    // Progress: at once in the status bar; a call still running after a moment also gets a
    // notification with Cancel (a quick call does not flash one). Cancel aborts the call.
    let report: ((message: string) => void) | undefined;
    let reported = 0;
    void vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: `Protocall: ${prepared.label}` },
      () => call,
    );
    const slow = setTimeout(() => {
      void vscode.window.withProgress(
        {
          location: vscode.ProgressLocation.Notification,
          title: `Protocall: sending ${prepared.label}`,
          cancellable: true,
        },
        (progress, token) => {
          token.onCancellationRequested(() => controller.abort());
          report = (message) => progress.report({ message });
          return call;
        },
      );
    }, NOTIFY_AFTER_MS);
    const result = await call.finally(() => clearTimeout(slow));
    running.delete(entry.id);
    entry.state = "done";
    entry.result = result;
    entry.method = result.method ?? entry.method;
    if (result.headers.length > 0) entry.headers = result.headers;
    panel.update(entry);
    const summary = `${prepared.label}: ${result.code ?? "failed"} (exit ${result.exitCode}) in ${Math.round(result.durationMs)} ms`;
    if (result.ok) log.info(summary);
    else {
      log.error(summary);
      for (const line of (result.error?.text ?? "").trimEnd().split("\n")) log.error(redactSecrets(line));
    }
    return { sent: true, entry, result, problems: [] };
  }

  async function copyAs(
    format: CopyFormat,
    uriArg?: unknown,
    indexArg?: unknown,
  ): Promise<string | undefined> {
    const target = await resolveTarget(uriArg, indexArg);
    if (!target) return undefined;
    const prepared = prepare(target);
    if ("error" in prepared || !prepared.options) {
      const problems = "error" in prepared ? [prepared.error] : prepared.problems.map((p) => p.text);
      void vscode.window.showErrorMessage(`Protocall: cannot copy the request: ${problems[0]}`);
      return undefined;
    }
    const make: Record<CopyFormat, (o: CurlOptions) => CopiedCommand> = {
      protocall: copyAsProtocallCurl,
      buf: copyAsBufCurl,
      grpcurl: copyAsGrpcurl,
    };
    const copied = make[format](prepared.options);
    // Not awaited: in a browser window the write may wait for the page to have focus.
    vscode.env.clipboard
      .writeText(copied.command)
      .then(undefined, (err: unknown) => log.warn(`Could not write to the clipboard: ${errorMessage(err)}`));
    const name = format === "protocall" ? "protocall curl" : format === "buf" ? "buf curl" : "grpcurl";
    if (copied.notes.length > 0) {
      void vscode.window.showWarningMessage(`Copied as ${name}. Note: ${copied.notes.join("; ")}.`);
    } else {
      void vscode.window.setStatusBarMessage(`Protocall: copied as ${name}`, 3000);
    }
    return copied.command;
  }

  const refresh = async () => {
    workspace.invalidate();
    await session?.refresh();
  };

  // Schemas change with the workspace's .proto files and the settings: drop what is cached.
  let pending: NodeJS.Timeout | undefined;
  const refreshSoon = () => {
    if (pending) clearTimeout(pending);
    pending = setTimeout(() => void refresh(), 300);
  };
  const protoWatcher = vscode.workspace.createFileSystemWatcher(
    "**/{*.proto,buf.yaml,buf.work.yaml,buf.lock}",
  );
  context.subscriptions.push(
    protoWatcher,
    protoWatcher.onDidChange(refreshSoon),
    protoWatcher.onDidCreate(refreshSoon),
    protoWatcher.onDidDelete(refreshSoon),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration("protocall.schemas") || e.affectsConfiguration("protocall.workspaceBuild")) {
        refreshSoon();
      }
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => refreshSoon()),
    { dispose: () => pending && clearTimeout(pending) },
    vscode.commands.registerCommand("protocall.send", (uri?: unknown, index?: unknown) => send(uri, index)),
    vscode.commands.registerCommand("protocall.copyAsCurl", (uri?: unknown, index?: unknown) =>
      copyAs("protocall", uri, index),
    ),
    vscode.commands.registerCommand("protocall.copyAsBufCurl", (uri?: unknown, index?: unknown) =>
      copyAs("buf", uri, index),
    ),
    vscode.commands.registerCommand("protocall.copyAsGrpcurl", (uri?: unknown, index?: unknown) =>
      copyAs("grpcurl", uri, index),
    ),
    vscode.commands.registerCommand("protocall.selectEnvironment", () => status.select()),
    vscode.commands.registerCommand("protocall.showResponse", () => {
      if (!panel.reveal())
        void vscode.window.showInformationMessage("Protocall: no response yet. Send a request first.");
    }),
  );

  return {
    send: (uri, index) => send(uri, index),
    copyAs: (format, uri, index) => copyAs(format, uri, index),
    panel: () => panel.state(),
    history(uri, index) {
      const u = typeof uri === "string" ? vscode.Uri.parse(uri) : uri;
      const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === u.toString());
      return doc ? [...(histories.get(keyOf(doc, index)) ?? [])] : [];
    },
    refresh,
  };
}
