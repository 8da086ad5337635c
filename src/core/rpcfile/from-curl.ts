// CurlOptions → `.rpc` request text, the inverse of requestToCurl: a `protocall curl` or `buf curl`
// command line (parsed by the curl flag parser) becomes a request that means the same thing. Flags
// become `# @flag value` options, `-H name: value` headers become header lines, inline `-d` data
// becomes the body and `-d @file` an include (`< file`). Used to paste a command into a request file.
// Text that reads as `{{...}}` is not escaped: in a request file it is a variable reference. Header
// files (`-H @file`) become `# @header @file` options, which are read before the header lines.
import { curlFlags } from "../invoke/curl-flags";
import type { CurlOptions } from "../invoke/options";
import { curlArguments } from "./copy-as";

const byShort = new Map(curlFlags.filter((f) => f.short).map((f) => [f.short as string, f]));
const byName = new Map(curlFlags.map((f) => [f.name, f]));

/** The request text for these options, named `name` when given, ending with a newline. */
export function curlToRequestText(o: CurlOptions, name?: string): string {
  const lines: string[] = [];
  if (name !== undefined) lines.push(`### ${name.replace(/[\r\n]+/g, " ").trim()}`.trimEnd());

  // Headers and data that fit the request block go there; the rest become options.
  const inlineHeaders = o.headers.filter((h) => !h.startsWith("@") && h.includes(":"));
  const optionHeaders = o.headers.filter((h) => !inlineHeaders.includes(h));
  const dataInBody = o.data !== undefined && o.data !== "" && o.data !== "@-";
  const rest: CurlOptions = {
    ...o,
    url: undefined,
    headers: optionHeaders,
    data: dataInBody ? undefined : o.data === "" ? undefined : o.data,
  };
  const args = curlArguments(rest);
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const eq = arg.indexOf("=");
    const flag = arg.startsWith("--")
      ? byName.get(eq >= 0 ? arg.slice(2, eq) : arg.slice(2))
      : byShort.get(arg.slice(1, 2));
    if (!flag) continue;
    if (eq >= 0 && arg.startsWith("--")) lines.push(`# @${flag.name} ${arg.slice(eq + 1)}`);
    else if (flag.kind === "bool") lines.push(`# @${flag.name}`);
    else lines.push(`# @${flag.name} ${args[++i]}`);
  }
  lines.push(o.url ?? "");
  for (const h of inlineHeaders) {
    const colon = h.indexOf(":");
    lines.push(`${h.slice(0, colon).trim()}: ${h.slice(colon + 1).trim()}`);
  }
  if (dataInBody && o.data !== undefined) {
    lines.push("");
    if (o.data.startsWith("@")) lines.push(`< ${o.data.slice(1)}`);
    else lines.push(o.data.replace(/\r\n?/g, "\n").replace(/\n+$/, ""));
  }
  return `${lines.join("\n")}\n`;
}
