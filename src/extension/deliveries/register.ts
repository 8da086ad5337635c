import type { ExtensionShared } from "../shared";

export function registerDeliveries(_shared: ExtensionShared): void {}
