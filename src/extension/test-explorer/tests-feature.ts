// The Test Explorer (VS Code's testing API): every request of every .rpc file in the workspace is a
// test (test-items.ts), with a run icon in the gutter of its first line. Running sends the requests
// through Send's own path (send-feature.ts `run`: the same preparation, and the core's
// checked-request runner that `protocall run` uses), a file's requests in file order so each sees
// what the earlier ones captured. A request passes when its checks hold; each failure line of the
// runner is reported at its line (a failed check at its `# @assert`, a call that failed outside the
// RPC once at the request line, as errored); a request that could not be sent is errored. VS Code's own
// "Rerun Failed Tests" runs the failed items again through the same run profile.
import * as vscode from "vscode";
import type { CheckFailure } from "../../core/assertions/checked-request";
import type { ProtocallContext } from "../context";
import type { SendOutcome } from "../send/api";
import type { SendFeature } from "../send/send-feature";
import { type RequestRef, TestItems } from "./test-items";

/** How one request ended in a test run. */
export interface TestRunEntry {
  id: string;
  label: string;
  result: "passed" | "failed" | "errored" | "skipped";
  /** The messages reported for it, with the one-based line they point at. */
  messages: { text: string; line?: number }[];
}

export interface TestsApi {
  /** The request items (discovering the workspace's .rpc files first). */
  items(): Promise<{ id: string; label: string; file: string; line: number }[]>;
  /** Runs the items with these ids (files or requests), or every item. */
  run(ids?: string[]): Promise<TestRunEntry[]>;
  /** What the last run reported (from the Test Explorer, the API or Rerun Failed Tests). */
  lastRun(): TestRunEntry[] | undefined;
}

export class TestsFeature {
  readonly api: TestsApi;
  private readonly controller: vscode.TestController;
  private readonly items: TestItems;
  private last: TestRunEntry[] | undefined;

  constructor(
    ctx: ProtocallContext,
    private readonly send: SendFeature,
  ) {
    this.controller = vscode.tests.createTestController("protocall.requests", "Protocall requests");
    this.items = new TestItems(this.controller);
    this.controller.createRunProfile(
      "Send",
      vscode.TestRunProfileKind.Run,
      async (request, token) => {
        await this.runTests(request, token);
      },
      true,
    );
    this.controller.refreshHandler = () => this.items.rescan();
    ctx.subscriptions.push(this.controller, this.items);
    this.api = {
      items: async () => {
        await this.items.discover();
        const out: { id: string; label: string; file: string; line: number }[] = [];
        for (const [, file] of this.controller.items) {
          for (const [, item] of file.children) {
            out.push({
              id: item.id,
              label: item.label,
              file: file.label,
              line: (item.range?.start.line ?? 0) + 1,
            });
          }
        }
        return out;
      },
      run: async (ids) => {
        await this.items.discover();
        const include = ids?.map((id) => this.find(id)).filter((x): x is vscode.TestItem => x !== undefined);
        const request = new vscode.TestRunRequest(include);
        const cancel = new vscode.CancellationTokenSource();
        try {
          return await this.runTests(request, cancel.token);
        } finally {
          cancel.dispose();
        }
      },
      lastRun: () => this.last,
    };
  }

  private find(id: string): vscode.TestItem | undefined {
    const file = this.controller.items.get(id.replace(/#\d+$/, ""));
    return file && file.id !== id ? file.children.get(id) : file;
  }

  /** The requests a run covers, grouped by file in file order (a file item stands for all of its). */
  private selected(
    request: vscode.TestRunRequest,
  ): Map<string, { item: vscode.TestItem; ref: RequestRef }[]> {
    const excluded = new Set(request.exclude?.map((i) => i.id));
    const picked: vscode.TestItem[] = [];
    const add = (item: vscode.TestItem) => {
      if (excluded.has(item.id)) return;
      if (this.items.request(item)) picked.push(item);
      else for (const [, child] of item.children) add(child);
    };
    if (request.include) for (const item of request.include) add(item);
    else for (const [, file] of this.controller.items) add(file);
    const byFile = new Map<string, { item: vscode.TestItem; ref: RequestRef }[]>();
    for (const item of picked) {
      const ref = this.items.request(item) as RequestRef;
      const list = byFile.get(ref.uri.toString()) ?? [];
      if (!list.some((x) => x.item.id === item.id)) list.push({ item, ref });
      byFile.set(ref.uri.toString(), list);
    }
    for (const list of byFile.values()) list.sort((a, b) => a.ref.index - b.ref.index);
    return byFile;
  }

  private async runTests(
    request: vscode.TestRunRequest,
    token: vscode.CancellationToken,
  ): Promise<TestRunEntry[]> {
    await this.items.discover();
    const run = this.controller.createTestRun(request);
    const entries: TestRunEntry[] = [];
    try {
      const byFile = this.selected(request);
      for (const list of byFile.values()) for (const { item } of list) run.enqueued(item);
      for (const list of byFile.values()) {
        for (const { item, ref } of list) {
          if (token.isCancellationRequested) {
            run.skipped(item);
            entries.push({ id: item.id, label: item.label, result: "skipped", messages: [] });
            continue;
          }
          run.started(item);
          entries.push(await this.runOne(run, item, ref));
        }
      }
    } finally {
      run.end();
      this.last = entries;
    }
    return entries;
  }

  private async runOne(run: vscode.TestRun, item: vscode.TestItem, ref: RequestRef): Promise<TestRunEntry> {
    const document = await vscode.workspace.openTextDocument(ref.uri);
    // The document may have changed since the items were listed.
    this.items.update(document);
    const outcome = await this.send.run({ document, index: ref.index }, { interactive: false });
    const entry: TestRunEntry = { id: item.id, label: item.label, result: "passed", messages: [] };
    const at = (line: number) => new vscode.Location(ref.uri, new vscode.Position(line, 0));
    run.appendOutput(`${item.label}: ${summary(outcome)}\r\n`, undefined, item);
    if (!outcome.sent) {
      entry.result = "errored";
      const line = item.range?.start.line ?? 0;
      const text = outcome.problems.join("\n") || "not sent";
      entry.messages.push({ text, line: line + 1 });
      const message = new vscode.TestMessage(text);
      message.location = at(line);
      run.errored(item, message);
      return entry;
    }
    const duration = outcome.result?.durationMs;
    if (outcome.verdict === "passed") {
      run.passed(item, duration);
      return entry;
    }
    entry.result = outcome.verdict === "errored" ? "errored" : "failed";
    // The core's failure lines (what `protocall run` prints), each with the check's value found.
    const messages = (outcome.failures ?? []).map((f) => {
      entry.messages.push({ text: f.message, line: f.range.start.line + 1 });
      return failureMessage(f, ref.uri);
    });
    if (messages.length === 0) messages.push(new vscode.TestMessage("failed"));
    if (entry.result === "errored") run.errored(item, messages, duration);
    else run.failed(item, messages, duration);
    return entry;
  }
}

/** A failure line as the Test Explorer shows it: its message, at its line, with the value found. */
function failureMessage(f: CheckFailure, uri: vscode.Uri): vscode.TestMessage {
  const c = f.check;
  const message = new vscode.TestMessage(f.message);
  const r = f.range;
  message.location = new vscode.Location(
    uri,
    new vscode.Range(r.start.line, r.start.character, r.end.line, r.end.character),
  );
  if (c?.found && c.actual !== undefined) message.actualOutput = JSON.stringify(c.actual, null, 2);
  return message;
}

function summary(outcome: SendOutcome): string {
  if (!outcome.sent) return `not sent: ${outcome.problems.join("; ")}`;
  const checks = outcome.checks ?? [];
  const status = outcome.result?.code ?? "failed";
  if (checks.some((c) => c.notRun)) return `${status}, ${checks.length} checks not run`;
  const failed = checks.filter((c) => !c.passed).length;
  return `${status}, ${checks.length - failed} of ${checks.length} checks passed`;
}
