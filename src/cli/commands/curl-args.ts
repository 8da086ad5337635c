// `protocall curl`'s flags for the CLI: the parser (in the core, shared with "Paste as Request" in
// the editor) and the text of `--help`.
import { curlFlags } from "../../core/invoke/curl-flags";
import { renderCurlHelp } from "./curl-help";

export { parseCurlArgs } from "../../core/invoke/curl-args";
export type { CurlFlag, FlagKind } from "../../core/invoke/curl-flags";
export { curlFlags };

/** The text of `protocall curl --help`. */
export function curlHelp(): string {
  return renderCurlHelp(curlFlags);
}
