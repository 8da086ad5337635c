// Registry modules as schema sources, seen from the schema layer. The layers run one way: the
// registry client (src/core/registry) builds on schema and invoke, so neither may import it. This
// file holds what they share instead: what a front end holds for registries (RegistryAccess, passed
// down with a call) and the one function that opens a module, which the registry layer provides
// (provideRegistryModules in src/core/registry/provide.ts) when a program starts: the CLI, the
// language server and the extension each do, before any schema is opened.
import { ProtocallError } from "../errors";
import type { ModuleRef } from "./module-ref";
import type { FileSource } from "./types";

/** What the editor holds for the registries it is signed in to, by remote (`host[:port]`). */
export interface RegistryAccess {
  /** API tokens: before PROTOCALL_TOKEN, BUF_TOKEN and the netrc. */
  readonly tokens: Readonly<Record<string, string>>;
  /** Extra trusted CAs in PEM (a registry's `caFile`, the local registry's own certificate). */
  readonly cas: Readonly<Record<string, string>>;
}

export interface ModuleOpenOptions {
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
  /** Tokens the editor holds, by remote. */
  readonly tokens?: Readonly<Record<string, string>>;
  /** CAs (PEM) the editor trusts, by remote. */
  readonly cas?: Readonly<Record<string, string>>;
  /** An extra PEM file of trusted CAs (`--cacert`), relative to cwd. */
  readonly caFile?: string;
  /** Protocall's cache directory; false: nothing read or written. */
  readonly cacheDir?: string | false;
  readonly bufPath?: string;
  readonly signal?: AbortSignal;
}

/** Opens a registry module (fetching and compiling it unless cached). */
export type ModuleOpener = (ref: ModuleRef, options: ModuleOpenOptions) => Promise<FileSource>;

let load: (() => Promise<ModuleOpener>) | undefined;

/** Called once by the registry layer: how modules are opened (loaded on first use). */
export function provideModuleOpener(loader: () => Promise<ModuleOpener>): void {
  load = loader;
}

/** The provided opener; a ProtocallError when this program has none. */
export async function moduleOpener(): Promise<ModuleOpener> {
  if (!load) {
    throw new ProtocallError(
      "registry modules (REMOTE/owner/module) cannot be opened in this program: it did not load the registry client",
    );
  }
  return load();
}
