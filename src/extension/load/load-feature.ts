// "Load Test…" on a request of a .rpc file: the run is the core's (core/load/load-test.ts, the one
// `protocall load` makes), shaped by the request's `# @load` line or, without one, by the rate and
// duration asked for; its progress and report go to the load panel (load-panel.ts), whose Stop ends
// the run and still reports what ran. The command returns the report (tests and other extensions).
// Its calls resolve and authorize as Send's do: the same session options (workspace schemas,
// registries) and the same OAuth2 tokens (a sign-in kept from Send serves the load test).
import { homedir } from "node:os";
import * as vscode from "vscode";
import { errorMessage } from "../../core/errors";
import type { LoadReport } from "../../core/load/report";
import type { ProtocallContext } from "../context";
import { workspaceEnvironmentFile } from "../send/environment-status";
import type { SendFeature } from "../send/send-feature";
import { resolveSendTarget } from "../send/send-target";
import { LoadPanel } from "./load-panel";

/** Answers to the questions (rate, duration) that a caller (a test, a script) gives instead of typing. */
export interface LoadAnswers {
  rate?: string;
  duration?: string;
}

export class LoadFeature implements vscode.Disposable {
  private readonly running = new Set<AbortController>();

  /**
   * `send`: the schemas and the OAuth2 tokens a request is sent with, so a load test resolves and
   * authorizes its request as Send does.
   */
  constructor(
    private readonly ctx: ProtocallContext,
    private readonly send: Pick<SendFeature, "engine" | "tokens">,
  ) {
    ctx.subscriptions.push(this);
  }

  /** Runs a load test of the request; undefined when it did not start (after saying why). */
  async start(uriArg?: unknown, indexArg?: unknown, answers?: LoadAnswers): Promise<LoadReport | undefined> {
    const target = await resolveSendTarget(uriArg, indexArg);
    if (!target) return undefined;
    const { document, index } = target;
    const [{ parseRpcFile }, { openRpcContext }, { loadOptionValues }, { shapeFromFlags, positiveNumber }] =
      await Promise.all([
        import("../../core/rpcfile/parse"),
        import("../../core/rpcfile/context"),
        import("../../core/load/load-options"),
        import("../../core/load/shape"),
      ]);
    const text = document.getText();
    const parsed = parseRpcFile(text);
    const request = parsed.requests[index];
    if (!request?.url) {
      void vscode.window.showErrorMessage("Protocall: no request to load-test there.");
      return undefined;
    }
    const label = request.name?.text ?? `request at line ${request.range.start.line + 1}`;
    let values: Map<string, string[]>;
    try {
      values = loadOptionValues((request.load ?? []).map((l) => l.text));
    } catch (err) {
      void vscode.window.showErrorMessage(`Protocall: ${label}: ${errorMessage(err)}`);
      return undefined;
    }
    if (!values.has("rate") && !values.has("concurrency") && !values.has("stages")) {
      const rate =
        answers?.rate ??
        (await vscode.window.showInputBox({
          title: `Load Test ${label}: requests per second`,
          prompt: "Requests per second (or write # @load rate=… duration=… above the request)",
          value: "10",
          validateInput: (v) => (Number(v) > 0 ? undefined : "a number above 0"),
        }));
      if (rate === undefined) return undefined;
      values.set("rate", [rate]);
    }
    if (!values.has("duration") && !values.has("stages") && !values.has("requests")) {
      const duration =
        answers?.duration ??
        (await vscode.window.showInputBox({
          title: `Load Test ${label}: duration`,
          prompt: "Duration, e.g. 10s or 1m",
          value: "10s",
        }));
      if (duration === undefined) return undefined;
      values.set("duration", [duration]);
    }
    const one = (name: string) => values.get(name)?.at(-1);
    const read = this.ctx.settings.reader(document.uri);
    const controller = new AbortController();
    const panel = new LoadPanel(this.ctx.extension.extensionUri, label, () => controller.abort());
    this.running.add(controller);
    try {
      const [{ runLoadTest }, { loadSummaryText }, { parseThreshold }] = await Promise.all([
        import("../../core/load/load-test"),
        import("../../core/load/report"),
        import("../../core/load/thresholds"),
      ]);
      const shape = shapeFromFlags(one);
      const connections = one("connections")
        ? positiveNumber(one("connections") ?? "", "connections", true)
        : 1;
      const maxInFlight = one("max-in-flight")
        ? positiveNumber(one("max-in-flight") ?? "", "max-in-flight", true)
        : undefined;
      const context = openRpcContext({
        filePath: document.uri.fsPath,
        environment: read("environment") || undefined,
        envFile: read("envFile") ? workspaceEnvironmentFile(this.ctx.settings, document.uri) : undefined,
        processEnv: process.env,
      });
      this.ctx.log.info(
        `Load test ${label}: ${[...values].map(([k, v]) => `${k}=${v.join(",")}`).join(" ")}`,
      );
      const { report } = await runLoadTest({
        source: {
          kind: "file",
          text,
          parsed,
          filePath: document.uri.fsPath,
          request,
          context,
          defaults: { protocol: read("protocol"), timeoutSeconds: read("timeout") },
        },
        label,
        shape,
        thresholds: (values.get("threshold") ?? []).map(parseThreshold),
        connections,
        maxInFlight,
        env: this.ctx.settings.connectionEnv(),
        homedir: homedir(),
        tokens: this.send.tokens,
        product: `protocall/${this.ctx.version}`,
        session: this.send.engine.sessionOptions(),
        signal: controller.signal,
        progressMs: 500,
        onProgress: (p) => panel.progress(p),
      });
      panel.report(report, loadSummaryText(report), controller.signal.aborted);
      return report;
    } catch (err) {
      panel.failed(errorMessage(err));
      this.ctx.log.warn(`Load test ${label} failed: ${errorMessage(err)}`);
      return undefined;
    } finally {
      this.running.delete(controller);
    }
  }

  dispose(): void {
    for (const c of this.running) c.abort();
  }
}
