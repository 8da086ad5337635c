// The Deliveries part's API (activate().deliveries). Methods throw on failure (ProtocallError with the
// fix); the commands wrap them with dialogs and show errors as notifications.
import type { JsonValue } from "@bufbuild/protobuf";
import type * as vscode from "vscode";
import type { ExportFormat } from "../../core/webhooks/delivery-export";
import type { SendOutcome } from "../../core/webhooks/listener-session";
import type { ListenerInfo } from "../listener-handle";
import type { DeliveryItemView } from "./deliveries-tree";

/** Where a replay goes: the running listener, the forward URL, or any http(s) URL. */
export type ReplayTarget = "listener" | "forward" | string;

export interface DeliveriesApi {
  /** The running listener, or undefined. */
  listener(): ListenerInfo | undefined;
  /** Starts the listener with the protocall.listener.* settings (or returns the running one). */
  startListener(): Promise<ListenerInfo>;
  stopListener(): Promise<void>;
  /** The value last given to the `protocall.listenerRunning` context key. */
  listenerRunningContext(): boolean;
  /** The status bar item as shown. */
  statusBar(): { text: string; tooltip: string; visible: boolean };
  /** The Deliveries view's items, as shown (newest first). */
  items(): DeliveryItemView[];
  /** Number of deliveries in the store. */
  count(): number;
  /**
   * The message above the view's items, if any: what a damaged store made the listener skip, and
   * that only the newest deliveries are listed.
   */
  viewMessage(): string | undefined;
  /** The file the deliveries are stored in (in the workspace's storage). */
  storeFile(): string;
  /** Opens delivery `id` as a read-only JSON document (what clicking it does). */
  open(id: number): Promise<vscode.TextDocument>;
  /** Sends delivery `id` again, byte for byte, and returns the answer. */
  replay(id: number, to: ReplayTarget): Promise<SendOutcome>;
  /** The JSON "Copy as JSON" puts on the clipboard (it also puts it there). */
  copyJson(id: number): Promise<string>;
  /** Writes every stored delivery (oldest first) to `uri`; returns how many. */
  exportTo(uri: vscode.Uri, format: ExportFormat): Promise<number>;
  /** Removes every delivery from the store, without asking. */
  clear(): Promise<void>;
  /**
   * Sends a synthetic push (or `event`, an EventRequest as protobuf JSON) to `to`, by default the
   * running listener (started first if needed).
   */
  sendTestPush(event?: JsonValue, to?: string): Promise<SendOutcome>;
  /** Fires when the listener starts or stops, or deliveries change. */
  readonly onDidChange: vscode.Event<void>;
}
