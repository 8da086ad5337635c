// The load test panel: one webview per run, beside the editor, with live charts of latency (p50,
// p99) and throughput per second drawn by media/load/load.js from the progress posted here, the
// report when the run ends, and Stop. Strict content security policy: only this extension's
// media/load files and a nonce for the script.
import { randomBytes } from "node:crypto";
import * as vscode from "vscode";
import type { LoadProgress } from "../../core/load/generator";
import type { LoadReport } from "../../core/load/report";

/** What the panel's script draws (plain data: the recorder stays in the extension host). */
interface ProgressMessage {
  type: "progress";
  elapsedMs: number;
  totalMs: number;
  requests: number;
  passed: number;
  rps: number;
  p50: number;
  p99: number;
  inFlight: number;
  ticks: LoadProgress["ticks"];
}

export class LoadPanel {
  private readonly panel: vscode.WebviewPanel;
  private ready = false;
  private last: ProgressMessage | undefined;
  private final: unknown;

  constructor(extensionUri: vscode.Uri, label: string, stop: () => void) {
    const media = vscode.Uri.joinPath(extensionUri, "media", "load");
    this.panel = vscode.window.createWebviewPanel(
      "protocall.load",
      `Load: ${label}`,
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
      { enableScripts: true, localResourceRoots: [media], retainContextWhenHidden: true },
    );
    const webview = this.panel.webview;
    const nonce = randomBytes(16).toString("base64");
    const css = webview.asWebviewUri(vscode.Uri.joinPath(media, "load.css"));
    const js = webview.asWebviewUri(vscode.Uri.joinPath(media, "load.js"));
    const csp = ["default-src 'none'", `style-src ${webview.cspSource}`, `script-src 'nonce-${nonce}'`].join(
      "; ",
    );
    webview.html = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${css}">
<title>Load: ${escapeHtml(label)}</title>
</head>
<body>
<header><h1>Load: ${escapeHtml(label)}</h1><span id="state">running</span><button id="stop">Stop</button></header>
<div id="live">starting…</div>
<figure><figcaption>Latency per second (ms): p50, p99</figcaption><svg id="latency" viewBox="0 0 400 120"></svg></figure>
<figure><figcaption>Throughput (requests per second)</figcaption><svg id="throughput" viewBox="0 0 400 120"></svg></figure>
<pre id="report"></pre>
<script nonce="${nonce}" src="${js}"></script>
</body>
</html>`;
    webview.onDidReceiveMessage((m: { action?: string }) => {
      if (m?.action === "ready") {
        this.ready = true;
        if (this.last) void webview.postMessage(this.last);
        if (this.final) void webview.postMessage(this.final);
      } else if (m?.action === "stop") stop();
    });
    // Closing the panel stops the run.
    this.panel.onDidDispose(stop);
  }

  progress(p: Pick<LoadProgress, "elapsedMs" | "totalMs" | "recorder" | "inFlight" | "ticks">): void {
    const r = p.recorder;
    this.last = {
      type: "progress",
      elapsedMs: p.elapsedMs,
      totalMs: p.totalMs,
      requests: r.requests,
      passed: r.passed,
      rps: r.requests / Math.max(p.elapsedMs / 1000, 0.001),
      p50: r.latency.percentile(50) / 1000,
      p99: r.latency.percentile(99) / 1000,
      inFlight: p.inFlight,
      ticks: [...p.ticks],
    };
    if (this.ready) void this.panel.webview.postMessage(this.last);
  }

  report(report: LoadReport, text: string, stopped: boolean): void {
    const t = report.total;
    const progress: ProgressMessage = {
      type: "progress",
      elapsedMs: report.elapsedMs,
      totalMs: report.elapsedMs,
      requests: t.requests,
      passed: t.passed,
      rps: t.rps,
      p50: t.latency.p50,
      p99: t.latency.p99,
      inFlight: 0,
      ticks: report.timeline,
    };
    const held = report.thresholds.every((x) => x.passed);
    const state = `${stopped ? "stopped" : "done"}${report.thresholds.length ? (held ? " · thresholds held" : " · a threshold failed") : ""}`;
    this.final = { type: "report", progress, text, state };
    if (this.ready) void this.panel.webview.postMessage(this.final);
  }

  failed(text: string): void {
    this.final = { type: "error", text };
    if (this.ready) void this.panel.webview.postMessage(this.final);
  }
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
