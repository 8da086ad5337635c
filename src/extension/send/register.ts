import type { ExtensionShared } from "../shared";

/** Registers this part's commands and views; returns its API (part of activate()'s ProtocallApi). */
export function registerSend(_shared: ExtensionShared): object {
  return {};
}
