// Live streams: a client or bidi stream whose messages the user sends one at a time while the call
// runs. "Start Live Stream" opens the call with an empty queue (core/invoke/live-requests.ts) through
// Send's own path (the same preparation, session and panel); "Send Next" above each body document
// sends that document, the panel's box sends a typed message once it is valid for the method's input
// type, "Close Send" half-closes. The panel shows a timeline of what was sent and received, with
// times, as it happens. "Save Session as Request" writes what was sent as a new request of the file
// (core/rpcfile/session-request.ts). A unary or server-streaming method started live is simply sent.
import * as vscode from "vscode";
import { errorMessage } from "../../core/errors";
import type { MethodInfo } from "../../core/invoke/call-session";
import { createLiveRequests, type LiveRequests } from "../../core/invoke/live-requests";
import { readRequestDocuments } from "../../core/invoke/request-data";
import { sessionRequest } from "../../core/rpcfile/session-request";
import type { ProtocallContext } from "../context";
import type { ResponseEntry } from "../response/render";
import type { SendOutcome } from "../send/api";
import type { SendFeature } from "../send/send-feature";
import { requestKey, resolveSendTarget, type SendTarget } from "../send/send-target";
import { LiveLenses } from "./live-lenses";

/** One live stream: its request, its queue, its panel entry and what it sent. */
export interface LiveStream {
  key: string;
  target: SendTarget;
  live: LiveRequests;
  entry?: ResponseEntry;
  method?: MethodInfo;
  /** The request's body documents (variables resolved), in order. */
  bodies: unknown[];
  /** For each part of the request's body (a document or an include), the index of its first document. */
  partStarts: number[];
  /** The next body document "Send Next" sends. */
  next: number;
  /** The values sent, in order. */
  sent: unknown[];
  startedAt: number;
  /** Settles when the call ends. */
  done: Promise<SendOutcome>;
}

export interface LiveApi {
  /** The stream of a request (running or the last one that ran), if any. */
  stream(uri: string | vscode.Uri, index: number): LiveStream | undefined;
}

export class LiveFeature {
  readonly api: LiveApi;
  /** Streams by request key: running ones, and the last one of each request (for Save Session). */
  private readonly streams = new Map<string, LiveStream>();
  private readonly lenses: LiveLenses;

  constructor(
    ctx: ProtocallContext,
    private readonly send: SendFeature,
  ) {
    this.lenses = new LiveLenses((doc, index) => this.running(requestKey(doc, index)));
    ctx.subscriptions.push(
      this.lenses,
      vscode.languages.registerCodeLensProvider({ language: "rpc" }, this.lenses),
    );
    send.history.onLiveAction = (action, entry, text) => void this.onPanel(action, entry, text);
    this.api = {
      stream: (uri, index) => {
        const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
        return doc ? this.streams.get(requestKey(doc, index)) : undefined;
      },
    };
  }

  /** protocall.live.start: starts the request as a live stream; returns once its method is known. */
  async start(uriArg?: unknown, indexArg?: unknown): Promise<LiveStream | undefined> {
    const target = await resolveSendTarget(uriArg, indexArg);
    if (!target) return undefined;
    const key = requestKey(target.document, target.index);
    const old = this.running(key);
    if (old) {
      void vscode.window.showInformationMessage("Protocall: this request's live stream is still running.");
      return old;
    }
    let methodKnown: () => void = () => {};
    const known = new Promise<void>((resolve) => {
      methodKnown = resolve;
    });
    const stream: LiveStream = {
      key,
      target,
      live: createLiveRequests(),
      bodies: [],
      partStarts: [],
      next: 0,
      sent: [],
      startedAt: Date.now(),
      done: Promise.resolve({ sent: false, problems: [] }),
    };
    let bodies: Promise<BodyDocuments> = Promise.resolve({ values: [], partStarts: [] });
    stream.done = this.send
      .run(target, {
        interactive: true,
        live: stream.live,
        onStart: (entry, o, prepared) => {
          entry.live = { timeline: [], closed: false };
          stream.entry = entry;
          bodies = bodyDocuments(o.data, prepared.bodyLines);
        },
        onMethod: (m) => {
          stream.method = m;
          void bodies.then(({ values: b, partStarts }) => {
            stream.bodies = b;
            stream.partStarts = partStarts;
            // Only client and bidi streams take messages one at a time.
            if (m.kind === "unary" || m.kind === "server_streaming") {
              for (const v of b) void stream.live.send(v).catch(() => {});
              stream.live.close();
              if (stream.entry) stream.entry.live = undefined;
            }
            methodKnown();
            this.lenses.refresh();
          });
        },
      })
      .finally(() => {
        methodKnown();
        if (stream.entry?.live) stream.entry.live.closed = true;
        this.refreshPanel(stream);
        this.lenses.refresh();
      });
    this.streams.set(key, stream);
    await Promise.race([known, stream.done]);
    this.lenses.refresh();
    return stream;
  }

  /**
   * protocall.live.sendNext: sends a body document: the next one, or the first of body part
   * `partIndex` (the lens above a document; an include before it may hold several documents).
   */
  async sendNext(uriArg?: unknown, indexArg?: unknown, partIndex?: unknown): Promise<boolean> {
    const stream = await this.streamFor(uriArg, indexArg);
    if (!stream) return false;
    const at =
      typeof partIndex === "number" ? (stream.partStarts[partIndex] ?? stream.bodies.length) : stream.next;
    if (at >= stream.bodies.length) {
      void vscode.window.showInformationMessage(
        "Protocall: every body document was sent; type another message in the response panel, or Close Send.",
      );
      return false;
    }
    const ok = await this.sendValue(stream, stream.bodies[at]);
    if (ok) stream.next = at + 1;
    return ok;
  }

  /**
   * protocall.live.sendMessage: sends a message typed as JSON (the panel's box, or asked for), once it
   * is valid for the method's input type. Returns why it was not sent, or undefined when it was.
   */
  async sendMessage(textArg?: unknown, uriArg?: unknown, indexArg?: unknown): Promise<string | undefined> {
    const stream = uriArg === undefined ? this.shown() : await this.streamFor(uriArg, indexArg);
    if (!stream) return "no live stream is running";
    const text =
      typeof textArg === "string"
        ? textArg
        : await vscode.window.showInputBox({
            title: "Protocall: Send a message",
            prompt: "The message as JSON",
          });
    if (text === undefined) return "canceled";
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      return this.refuse(stream, `not JSON: ${errorMessage(err)}`);
    }
    const invalid = stream.method?.checkRequest(value);
    if (invalid) return this.refuse(stream, invalid);
    if (!(await this.sendValue(stream, value))) return stream.entry?.live?.error ?? "not sent";
    if (stream.entry) this.send.history.panel.clearInput(stream.entry);
    return undefined;
  }

  /** protocall.live.closeSend: half-closes the stream (the server then finishes its side). */
  async closeSend(uriArg?: unknown, indexArg?: unknown): Promise<boolean> {
    const stream = uriArg === undefined ? this.shown() : await this.streamFor(uriArg, indexArg);
    if (!stream || stream.live.closed) return false;
    stream.live.close();
    if (stream.entry?.live) stream.entry.live.closed = true;
    this.refreshPanel(stream);
    this.lenses.refresh();
    return true;
  }

  /** protocall.live.saveSession: writes what the stream sent as a new request after the last one. */
  async saveSession(uriArg?: unknown, indexArg?: unknown): Promise<string | undefined> {
    const stream = uriArg === undefined ? this.shown(true) : await this.streamFor(uriArg, indexArg, true);
    if (!stream) return undefined;
    const document = await vscode.workspace.openTextDocument(stream.target.document.uri);
    const when = new Date(stream.startedAt).toLocaleTimeString();
    let made: ReturnType<typeof sessionRequest>;
    try {
      made = sessionRequest(document.getText(), stream.target.index, stream.sent, when);
    } catch (err) {
      void vscode.window.showErrorMessage(`Protocall: cannot save the session: ${errorMessage(err)}`);
      return undefined;
    }
    const edit = new vscode.WorkspaceEdit();
    for (const i of made.append.inserts) edit.insert(document.uri, document.positionAt(i.offset), i.text);
    if (!(await vscode.workspace.applyEdit(edit))) {
      void vscode.window.showErrorMessage(
        "Protocall: cannot save the session: the document could not be edited.",
      );
      return undefined;
    }
    void vscode.window.setStatusBarMessage(`Protocall: saved "${made.name}"`, 3000);
    return made.name;
  }

  /** A running stream of the request, or undefined. */
  private running(key: string): LiveStream | undefined {
    const s = this.streams.get(key);
    return s && !s.live.closed ? s : undefined;
  }

  /** The stream the response panel shows. */
  private shown(evenEnded = false): LiveStream | undefined {
    const id = this.send.history.panel.state().entry?.id;
    for (const s of this.streams.values()) {
      if (s.entry?.id === id && (evenEnded || !s.live.closed)) return s;
    }
    return undefined;
  }

  private async streamFor(
    uriArg: unknown,
    indexArg: unknown,
    evenEnded = false,
  ): Promise<LiveStream | undefined> {
    const target = await resolveSendTarget(uriArg, indexArg);
    if (!target) return undefined;
    const key = requestKey(target.document, target.index);
    const s = evenEnded ? this.streams.get(key) : this.running(key);
    if (!s) {
      void vscode.window.showWarningMessage(
        evenEnded
          ? "Protocall: this request has no live stream to save; start one with Start Live Stream."
          : "Protocall: this request has no running live stream; start one with Start Live Stream.",
      );
    }
    return s;
  }

  /** Queues a message; the timeline shows it once the call takes it. */
  private async sendValue(stream: LiveStream, value: unknown): Promise<boolean> {
    try {
      const sent = await stream.live.send(value);
      stream.sent.push(value);
      const live = stream.entry?.live;
      if (live) {
        live.error = undefined;
        live.timeline.push({ dir: "sent", at: sent.at, index: sent.index, json: JSON.stringify(value) });
      }
      this.refreshPanel(stream);
      return true;
    } catch (err) {
      this.refuse(stream, errorMessage(err));
      return false;
    }
  }

  private refuse(stream: LiveStream, why: string): string {
    if (stream.entry?.live) stream.entry.live.error = why;
    this.refreshPanel(stream);
    return why;
  }

  private refreshPanel(stream: LiveStream): void {
    if (stream.entry) this.send.history.panel.update(stream.entry);
  }

  private async onPanel(action: "liveSend" | "liveClose" | "liveSave", entry: ResponseEntry, text?: string) {
    const stream = [...this.streams.values()].find((s) => s.entry?.id === entry.id);
    if (!stream) return;
    const { uri } = stream.target.document;
    if (action === "liveSend") await this.sendMessage(text ?? "", uri.toString(), stream.target.index);
    else if (action === "liveClose") await this.closeSend(uri.toString(), stream.target.index);
    else await this.saveSession(uri.toString(), stream.target.index);
  }
}

/** The request's body documents (the prepared -d text, variables resolved). */
interface BodyDocuments {
  values: unknown[];
  /** For each body part, the index of its first document (the count before it, for a part with none). */
  partStarts: number[];
}

/** The body's documents, and where each body part's documents start (from the parts' lines in the data). */
async function bodyDocuments(
  data: string | undefined,
  bodyLines: readonly number[] = [],
): Promise<BodyDocuments> {
  if (!data || data.startsWith("@")) return { values: [], partStarts: [] };
  const values: unknown[] = [];
  const lines: number[] = [];
  for await (const doc of readRequestDocuments(data, "the body")) {
    values.push(doc.value);
    lines.push(doc.line);
  }
  const partStarts = bodyLines.map((line) => {
    const i = lines.findIndex((l) => l >= line);
    return i < 0 ? values.length : i;
  });
  return { values, partStarts };
}
