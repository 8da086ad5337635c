// The listener's settings (protocall.listener.*) as the core's ListenerSettings.
import * as vscode from "vscode";
import type { ListenerSettings } from "../../core/webhooks/listener-session";

export function listenerSettings(): ListenerSettings {
  const c = vscode.workspace.getConfiguration("protocall.listener");
  const forwardTo = c.get<string>("forwardTo", "").trim();
  return {
    host: c.get<string>("host", "127.0.0.1"),
    port: c.get<number>("port", 0),
    tls: c.get<boolean>("tls", true),
    ...(forwardTo ? { forwardTo } : {}),
    maxStoreBytes: c.get<number>("maxStoreBytes", 64 * 1024 * 1024),
  };
}
