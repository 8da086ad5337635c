// The Traffic part's API (activate().traffic). Methods throw on failure (ProtocallError with the fix);
// the commands wrap them with dialogs and show errors as notifications.
import type * as vscode from "vscode";
import type { ReplayResult } from "../../core/proxy/replay-call";

/** What a call's tree item shows (for the API and its tests). */
export interface TrafficItemView {
  readonly id: number;
  readonly label: string;
  readonly description: string;
  readonly tooltip: string;
}

/** The running proxy. */
export interface ProxyInfo {
  /** The proxy's URL: send requests here instead of to the upstream. */
  readonly url: string;
  readonly upstream: string;
  readonly storeFile: string;
}

export interface TrafficApi {
  /** The running proxy, or undefined. */
  proxy(): ProxyInfo | undefined;
  /** Starts the proxy in front of `upstream` (stopping one that runs in front of another). */
  startProxy(upstream: string): Promise<ProxyInfo>;
  stopProxy(): Promise<void>;
  /** The Traffic view's items, as shown (newest first). */
  items(): TrafficItemView[];
  /** Opens call `id` as a read-only document (what clicking it does). */
  open(id: number): Promise<vscode.TextDocument>;
  /** Appends call `id` as a request (with `# @assert` lines for what was observed) to `uri`. */
  saveAsRequest(id: number, uri: vscode.Uri): Promise<string>;
  /** Appends call `id` as a `protocall mock` stub to `uri`. */
  saveAsStub(id: number, uri: vscode.Uri): Promise<string>;
  /** Sends call `id` again and compares the answer with the recorded one. */
  replay(id: number, to?: string): Promise<ReplayResult>;
  /** Fires when the proxy starts or stops, or calls arrive. */
  readonly onDidChange: vscode.Event<void>;
}
