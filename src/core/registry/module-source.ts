// A registry module as a schema source: its compiled schema (module-schema.ts) opened like any
// descriptor-set file, lazily (only the files a look-up needs are decoded), so a module of thousands
// of files costs a call only what the call uses.
import { openDescriptorSetBytes, openDescriptorSetFile } from "../schema/descriptor-set-source";
import { formatModuleRef, type ModuleRef } from "../schema/module-ref";
import type { FileSource } from "../schema/types";
import { loadModuleSchema, type ModuleSchemaOptions } from "./module-schema";

/** Opens `ref` (fetching and compiling it unless cached). Throws a one-line ProtocallError on failure. */
export async function openRegistryModule(
  ref: ModuleRef,
  options: ModuleSchemaOptions = {},
): Promise<FileSource> {
  const schema = await loadModuleSchema(ref, options);
  const label = `registry module ${formatModuleRef(ref)}`;
  return schema.path
    ? openDescriptorSetFile(schema.path, label)
    : openDescriptorSetBytes(schema.bytes!, label);
}
