// Makes registry modules openable as schemas (`--schema REMOTE/owner/module`, `@schema`, the
// protocall.schemas setting): the schema layer cannot import this layer (it builds on schema), so
// each program start calls provideRegistryModules. The client itself loads on the first module.
import { provideModuleOpener } from "../schema/registry-modules";

export function provideRegistryModules(): void {
  provideModuleOpener(async () => (await import("./module-source")).openRegistryModule);
}
