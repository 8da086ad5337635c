// "Send" and its companions: protocall.send (CodeLens "▶ Send", Ctrl/Cmd+Alt+R, the palette), the
// response panel and its history, the verbose transcript in the output channel (secrets redacted),
// "Copy as" protocall curl / buf curl / grpcurl, and the environment status bar. Requests run in the
// extension host through the core's call session (no child process), which keeps connections and
// schemas warm between sends. The commands are listed in ../command-table.ts.
// A sent request is called and checked by the core's checked-request runner (the one `protocall run`
// uses): the panel lists each check with the value found, and its `# @capture` values are kept for
// the later requests of its file; the Test Explorer runs requests through the same `run`. A failed
// `# @snapshot` opens its diff with Accept (snapshot-review.ts).

import { homedir } from "node:os";
import { dirname } from "node:path";
import * as vscode from "vscode";
import { type CheckedCall, checkedRequestOf, runCheckedRequest } from "../../core/assertions/checked-request";
import { errorMessage } from "../../core/errors";
import type { CallObserver, CallResult, MethodInfo } from "../../core/invoke/call-session";
import type { BearerTokens } from "../../core/invoke/io";
import type { LiveRequests } from "../../core/invoke/live-requests";
import type { CurlOptions } from "../../core/invoke/options";
import { redactSecrets } from "../../core/invoke/redact";
import { createProgressMeter } from "../../core/invoke/stream-progress";
import {
  type CopiedCommand,
  copyAsBufCurl,
  copyAsGrpcurl,
  copyAsProtocallCurl,
} from "../../core/rpcfile/copy-as";
import { filesOutside } from "../../core/rpcfile/local-files";
import type { PreparedSend } from "../../core/rpcfile/prepare-send";
import type { ProtocallContext } from "../context";
import type { ResponseEntry } from "../response/render";
import type { CopyFormat, SendApi, SendOutcome } from "./api";
import { CallEngine } from "./call-engine";
import { CapturedValues } from "./captured-values";
import { createEnvironmentStatus, type EnvironmentStatus } from "./environment-status";
import { editorTokens, signOutOAuth } from "./oauth-sign-in";
import { preparedProblems, prepareTarget, restrictedProblem } from "./prepare";
import { ResponseHistory } from "./response-history";
import { requestKey, resolveSendTarget, type SendTarget } from "./send-target";
import { SnapshotReview } from "./snapshot-review";
import { WorkspaceSources } from "./workspace-sources";

/** A call still running after this long shows a cancellable progress notification. */
const NOTIFY_AFTER_MS = 700;

/** Where a running call's progress goes: the notification once it shows (a share done moves its bar). */
interface SendProgress {
  report(message: string, fraction?: number): void;
}

// Functions, not the imports themselves: reading an export of the core at load time would load the
// lazy bundle (dist/extension-lazy.js) during activation.
const copyMakers: Record<CopyFormat, { name: string; make: (o: CurlOptions) => CopiedCommand }> = {
  protocall: { name: "protocall curl", make: (o) => copyAsProtocallCurl(o) },
  buf: { name: "buf curl", make: (o) => copyAsBufCurl(o) },
  grpcurl: { name: "grpcurl", make: (o) => copyAsGrpcurl(o) },
};

/** How a request is run: by Send (interactive: the panel comes forward, problems pop up) or as a test. */
export interface RunMode {
  interactive: boolean;
  /** A live stream (../live/live-feature.ts): the messages to send, queued while the call runs. */
  live?: LiveRequests;
  /** The call is about to start: its panel entry, options and preparation. */
  onStart?(entry: ResponseEntry, o: CurlOptions, prepared: PreparedSend): void;
  /** The method, once resolved. */
  onMethod?(method: MethodInfo): void;
}

export class SendFeature {
  readonly api: SendApi;
  /** What `# @capture` options took, per file, for the requests after them. */
  readonly captures = new CapturedValues();
  readonly engine: CallEngine;
  readonly history: ResponseHistory;
  /** Failed `# @snapshot` checks: their diff and Accept. */
  readonly snapshots = new SnapshotReview();
  private readonly status: EnvironmentStatus;
  private readonly running = new Map<number, AbortController>();
  /** Requests (key and URL) the user confirmed in a restricted workspace. */
  private readonly confirmed = new Set<string>();
  private nextId = 1;
  /** `--auth` tokens: sign-ins through the browser, kept in the secret storage (the load test's too). */
  readonly tokens: BearerTokens;

  constructor(private readonly ctx: ProtocallContext) {
    this.tokens = editorTokens(ctx);
    const workspace = new WorkspaceSources(ctx);
    this.engine = new CallEngine(ctx, workspace);
    this.history = new ResponseHistory(ctx.extensionUri, ctx.settings, (e) =>
      this.running.get(e.id)?.abort(),
    );
    this.status = createEnvironmentStatus(ctx.settings);
    ctx.subscriptions.push(this.history, this.status, workspace, this.engine, this.snapshots, {
      dispose: () => {
        for (const c of this.running.values()) c.abort();
      },
    });
    this.watchSchemas();
    this.api = {
      send: (uri, index) => this.send(uri, index),
      copyAs: (format, uri, index) => this.copyAs(format, uri, index),
      panel: () => this.history.panel.state(),
      history: (uri, index) => {
        const u = typeof uri === "string" ? vscode.Uri.parse(uri) : uri;
        const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === u.toString());
        return doc ? this.history.list(requestKey(doc, index)) : [];
      },
      refresh: () => this.engine.refresh(),
    };
  }

  /** protocall.send: sends the request and shows its response. */
  async send(uriArg?: unknown, indexArg?: unknown): Promise<SendOutcome | undefined> {
    const target = await resolveSendTarget(uriArg, indexArg);
    if (!target) return undefined;
    return this.run(target, { interactive: true });
  }

  /**
   * Sends one request with the values its file captured so far, checks its assertions and keeps its
   * captures. As a test (not interactive) the panel is not brought forward and nothing pops up.
   */
  async run(target: SendTarget, mode: RunMode): Promise<SendOutcome> {
    const prepared = this.prepare(target);
    if ("error" in prepared) {
      return this.notSent(target, `request ${target.index + 1}`, [prepared.error], mode);
    }
    const o = prepared.options;
    if (!o) return this.notSent(target, prepared.label, preparedProblems(prepared) ?? [], mode);
    const restricted = restrictedProblem(o);
    if (restricted) return this.notSent(target, prepared.label, [restricted], mode);
    const key = requestKey(target.document, target.index);
    if (!(await this.confirmRestricted(key, prepared.label, o))) {
      return { sent: false, problems: ["not confirmed"] };
    }
    const outside = await this.confirmOutside(target, key, prepared, mode);
    if (outside === "refused") return { sent: false, problems: ["not confirmed"] };
    if (outside) return this.notSent(target, prepared.label, [outside], mode);
    return this.call(target, key, prepared, o, mode);
  }

  /** The request prepared with its folder's settings and its file's captured values. */
  prepare(target: SendTarget): ReturnType<typeof prepareTarget> {
    return prepareTarget(this.ctx.settings, target, this.captures.get(target.document.uri.toString()));
  }

  /** protocall.copyAsCurl / copyAsBufCurl / copyAsGrpcurl: the request as a command line on the clipboard. */
  async copyAs(format: CopyFormat, uriArg?: unknown, indexArg?: unknown): Promise<string | undefined> {
    const target = await resolveSendTarget(uriArg, indexArg);
    if (!target) return undefined;
    const prepared = prepareTarget(this.ctx.settings, target);
    const problems = preparedProblems(prepared);
    if (problems || "error" in prepared || !prepared.options) {
      void vscode.window.showErrorMessage(`Protocall: cannot copy the request: ${problems?.[0]}`);
      return undefined;
    }
    const { name, make } = copyMakers[format];
    const copied = make(prepared.options);
    // Not awaited: in a browser window the write may wait for the page to have focus.
    vscode.env.clipboard
      .writeText(copied.command)
      .then(undefined, (err: unknown) =>
        this.ctx.log.warn(`Could not write to the clipboard: ${errorMessage(err)}`),
      );
    if (copied.notes.length > 0) {
      void vscode.window.showWarningMessage(`Copied as ${name}. Note: ${copied.notes.join("; ")}.`);
    } else {
      void vscode.window.setStatusBarMessage(`Protocall: copied as ${name}`, 3000);
    }
    return copied.command;
  }

  /** protocall.selectEnvironment. */
  selectEnvironment(): Promise<string | undefined> {
    return this.status.select();
  }

  /** protocall.showResponse. */
  showResponse(): void {
    if (!this.history.panel.reveal()) {
      void vscode.window.showInformationMessage("Protocall: no response yet. Send a request first.");
    }
  }

  /** protocall.oauth.signOut: removes kept OAuth2 sign-ins (chosen, or "all"); how many. */
  signOutOAuth(which?: unknown): Promise<number> {
    return signOutOAuth(this.ctx, which);
  }

  /** Schemas change with the workspace's .proto files and the settings: drop what is cached. */
  private watchSchemas(): void {
    let pending: NodeJS.Timeout | undefined;
    const refreshSoon = () => {
      if (pending) clearTimeout(pending);
      pending = setTimeout(() => void this.engine.refresh(), 300);
    };
    const watcher = vscode.workspace.createFileSystemWatcher(
      "**/{*.proto,buf.yaml,buf.work.yaml,buf.lock,*.binpb}",
    );
    this.ctx.subscriptions.push(
      watcher,
      watcher.onDidChange(refreshSoon),
      watcher.onDidCreate(refreshSoon),
      watcher.onDidDelete(refreshSoon),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (this.ctx.settings.affects(e, "schemas", "workspaceBuild", "bufPath", "compiler", "protocPath")) {
          refreshSoon();
        }
      }),
      vscode.workspace.onDidGrantWorkspaceTrust(() => refreshSoon()),
      { dispose: () => pending && clearTimeout(pending) },
    );
  }

  /** In a restricted workspace, a request goes out only once the user confirmed its URL. */
  private async confirmRestricted(key: string, label: string, o: CurlOptions): Promise<boolean> {
    if (vscode.workspace.isTrusted) return true;
    const what = `${key}\n${o.url ?? ""}`;
    if (this.confirmed.has(what)) return true;
    const answer = await vscode.window.showWarningMessage(
      `Send "${label}" to ${o.url ?? "(no URL)"}?`,
      {
        modal: true,
        detail: "This workspace is in Restricted Mode: Protocall sends a request only when you confirm it.",
      },
      "Send",
    );
    if (answer !== "Send") return false;
    this.confirmed.add(what);
    return true;
  }

  /**
   * A request that reads or writes files outside the workspace (an include, `@data`, a header file,
   * `@output`) is sent only once the user allowed those paths for it (asked in a modal dialog; as a
   * test, it is not sent and the problem says so). Returns undefined when it may be sent.
   */
  private async confirmOutside(
    target: SendTarget,
    key: string,
    prepared: PreparedSend,
    mode: RunMode,
  ): Promise<string | "refused" | undefined> {
    const folders = vscode.workspace.workspaceFolders?.map((f) => f.uri.fsPath) ?? [];
    const roots = folders.length > 0 ? folders : [dirname(target.document.uri.fsPath)];
    const outside = filesOutside(prepared.files, roots);
    if (outside.length === 0) return undefined;
    const what = `${key}\n${outside.map((f) => `${f.access} ${f.path}`).join("\n")}`;
    if (this.confirmed.has(what)) return undefined;
    const reads = outside.filter((f) => f.access === "read").map((f) => `${f.via} ${f.path}`);
    const writes = outside.filter((f) => f.access === "write").map((f) => `${f.via} ${f.path}`);
    const said = [
      reads.length > 0 ? `reads ${reads.join(", ")}` : "",
      writes.length > 0 ? `writes ${writes.join(", ")}` : "",
    ]
      .filter(Boolean)
      .join(" and ");
    if (!mode.interactive) {
      return `"${prepared.label}" ${said}, outside the workspace; send it once with Send to allow it, or move the file into the workspace`;
    }
    const answer = await vscode.window.showWarningMessage(
      `"${prepared.label}" ${said}, outside the workspace. Send it?`,
      {
        modal: true,
        detail:
          "Protocall reads and writes files outside the workspace only when you allow it, once per request until the window reloads.",
      },
      "Send",
    );
    if (answer !== "Send") return "refused";
    this.confirmed.add(what);
    return undefined;
  }

  private notSent(target: SendTarget, label: string, problems: string[], mode: RunMode): SendOutcome {
    const entry: ResponseEntry = {
      id: this.nextId++,
      requestLabel: label,
      startedAt: Date.now(),
      state: "not-sent",
      headers: [],
      messages: [],
      problems,
    };
    this.history.add(requestKey(target.document, target.index), entry, mode.interactive);
    this.ctx.log.warn(`Not sent: ${label}: ${problems.join("; ")}`);
    const more = problems.length > 1 ? ` (and ${problems.length - 1} more)` : "";
    if (mode.interactive) {
      void vscode.window.showErrorMessage(`Protocall: ${label} was not sent: ${problems[0]}${more}`);
    }
    return { sent: false, entry, problems };
  }

  /** Runs the call, showing it in the panel as it goes, with progress and Cancel. */
  private async call(
    target: SendTarget,
    key: string,
    prepared: PreparedSend,
    o: CurlOptions,
    mode: RunMode,
  ): Promise<SendOutcome> {
    const entry: ResponseEntry = {
      id: this.nextId++,
      requestLabel: prepared.label,
      url: o.url,
      protocol: o.protocol,
      startedAt: Date.now(),
      state: "running",
      headers: [],
      messages: [],
    };
    this.history.add(key, entry, mode.interactive);
    const controller = new AbortController();
    this.running.set(entry.id, controller);
    const log = this.ctx.log;
    log.info(
      `Send ${prepared.label}: ${redactSecrets(copyAsProtocallCurl({ ...o, verbose: true }).command)}`,
    );
    const progress: SendProgress = { report: () => {} };
    const io = {
      cwd: prepared.baseDir,
      env: this.ctx.settings.connectionEnv(),
      homedir: homedir(),
      tokens: this.tokens,
    };
    const observer = this.observer(entry, progress, mode);
    mode.onStart?.(entry, o, prepared);
    const request = checkedRequestOf(prepared, o);
    const checked: Promise<CheckedCall> = this.engine
      .session()
      .then((session) =>
        runCheckedRequest(session, request, io, { observer, signal: controller.signal, live: mode.live }),
      );
    const result = await this.showProgress(
      prepared.label,
      checked.then((c) => c.call),
      controller,
      progress,
      // An upload shows its progress at once; other calls only when they take a moment.
      o.streamFile !== undefined ? 0 : NOTIFY_AFTER_MS,
    );
    this.running.delete(entry.id);
    const { evaluation, verdict, failures } = await checked;
    entry.checks = evaluation.checks;
    const snapshot = evaluation.checks.find((c) => c.kind === "snapshot" && c.diff);
    if (snapshot && request.snapshot)
      void this.snapshots.review(request.snapshot, snapshot, mode.interactive);
    this.captures.add(target.document.uri.toString(), evaluation.captured);
    this.finish(entry, prepared.label, result);
    return {
      sent: true,
      entry,
      result,
      problems: [],
      checks: evaluation.checks,
      captured: evaluation.captured,
      verdict,
      failures,
    };
  }

  /** What a running call reports goes to the log, the panel and the progress notification. */
  private observer(entry: ResponseEntry, progress: SendProgress, mode: RunMode): CallObserver {
    const panel = this.history.panel;
    let reported = 0;
    // A # @stream-file upload: the core's meter (a few redraws a second) feeds the panel and the notification.
    const upload = createProgressMeter({
      width: 0,
      draw: (line, fraction) => {
        entry.upload = { ...(entry.upload ?? { sent: 0, total: 0 }), line };
        panel.update(entry);
        progress.report(line, fraction);
      },
    });
    return {
      streamProgress: (p) => {
        entry.upload = { sent: p.sent, total: p.total, line: entry.upload?.line ?? "" };
        upload(p);
      },
      log: (line) => this.ctx.log.info(redactSecrets(line)),
      method: (m) => {
        entry.method = m.name;
        mode.onMethod?.(m);
        panel.update(entry);
      },
      headers: (h) => {
        entry.headers = h;
        panel.update(entry);
      },
      message: (json, i) => {
        entry.messages.push(json);
        if (entry.live) {
          // A live stream's timeline shows each message with its time, between those sent.
          entry.live.timeline.push({ dir: "received", at: Date.now(), index: i, json });
          panel.update(entry);
        } else {
          panel.appendMessage(entry, i);
        }
        // At most a few progress updates a second, however fast a stream is.
        const now = Date.now();
        if (now - reported >= 200) {
          reported = now;
          progress.report(`${i + 1} message${i === 0 ? "" : "s"}`);
        }
      },
    };
  }

  /**
   * Progress: at once in the status bar; a call still running after a moment also gets a
   * notification with Cancel (a quick call does not flash one). Cancel aborts the call.
   */
  private async showProgress(
    label: string,
    call: Promise<CallResult>,
    controller: AbortController,
    progress: SendProgress,
    notifyAfterMs: number,
  ): Promise<CallResult> {
    void vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: `Protocall: ${label}` },
      () => call,
    );
    const slow = setTimeout(() => {
      void vscode.window.withProgress(
        {
          location: vscode.ProgressLocation.Notification,
          title: `Protocall: sending ${label}`,
          cancellable: true,
        },
        (notification, token) => {
          token.onCancellationRequested(() => controller.abort());
          // A share done (an upload) moves the notification's bar by the difference.
          let shown = 0;
          progress.report = (message, fraction) => {
            const increment = fraction === undefined ? undefined : Math.max(0, (fraction - shown) * 100);
            if (fraction !== undefined) shown = Math.max(shown, fraction);
            notification.report({ message, increment });
          };
          return call;
        },
      );
    }, notifyAfterMs);
    return call.finally(() => clearTimeout(slow));
  }

  /** The call ended: the panel shows the result, the log its summary (and the error's text). */
  private finish(entry: ResponseEntry, label: string, result: CallResult): void {
    entry.state = "done";
    entry.result = result;
    entry.method = result.method ?? entry.method;
    if (result.headers.length > 0) entry.headers = result.headers;
    this.history.panel.update(entry);
    const log = this.ctx.log;
    const summary = `${label}: ${result.code ?? "failed"} (exit ${result.exitCode}) in ${Math.round(result.durationMs)} ms`;
    if (result.ok) {
      log.info(summary);
      return;
    }
    log.error(summary);
    for (const line of (result.error?.text ?? "").trimEnd().split("\n")) log.error(redactSecrets(line));
  }
}
