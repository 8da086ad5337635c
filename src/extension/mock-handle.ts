// The running mock server, as every part of the extension sees it: its URL and a change event. One
// handle per activation, on the context: the Mock part sets it when the mock starts or stops; the
// Services view reads it to list the mock as a server source while it runs.
import * as vscode from "vscode";
import type { ServiceServer } from "../server/protocol";

/** The running mock. */
export interface MockInfo {
  /** Base URL, e.g. `http://127.0.0.1:41234`. */
  readonly url: string;
  readonly port: number;
  /** What it serves the schema of (a source's label). */
  readonly schemaLabel: string;
}

export class MockHandle implements vscode.Disposable {
  private info: MockInfo | undefined;
  private readonly changed = new vscode.EventEmitter<void>();
  /** Fires when the mock starts or stops. */
  readonly onDidChange: vscode.Event<void> = this.changed.event;

  /** The running mock, or undefined when it is stopped. */
  get current(): MockInfo | undefined {
    return this.info;
  }

  /** Set by the Mock part when the mock starts (info) or stops (undefined). */
  set(info: MockInfo | undefined): void {
    this.info = info;
    this.changed.fire();
  }

  /** The running mock as a server of the Services view (gRPC reflection over h2c), or none. */
  servers(): ServiceServer[] {
    if (!this.info) return [];
    return [{ url: this.info.url, name: "mock server", protocol: "grpc", http2PriorKnowledge: true }];
  }

  dispose(): void {
    this.info = undefined;
    this.changed.dispose();
  }
}
