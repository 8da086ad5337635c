import type { ExtensionShared } from "../shared";

export function registerWebhooks(_shared: ExtensionShared): void {}
