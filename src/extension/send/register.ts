import type { ExtensionShared } from "../shared";

export function registerSend(_shared: ExtensionShared): void {}
