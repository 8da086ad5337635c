import type { ExtensionShared } from "../shared";

export function registerServices(_shared: ExtensionShared): void {}
