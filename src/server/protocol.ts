// What the editor extension and the language server agree on: the commands the code lenses run,
// the custom request that refreshes schemas, and the settings (initializationOptions and the
// `protocall` configuration section). Plain constants, so the extension can import them without
// pulling in the server.
export type { ServerSettings } from "./settings";

/** "▶ Send": arguments `[documentUri: string, requestIndex: number]`. */
export const sendCommand = "protocall.send";
/** "Copy as curl": arguments `[documentUri: string, requestIndex: number]`. */
export const copyAsCurlCommand = "protocall.copyAsCurl";
/** Request (no params, returns null): drop every cached schema, reflection included, and check all files again. */
export const refreshRequest = "protocall/refreshSchemas";
