// Command lines → `.rpc` request text ("Paste as Request"), the inverse of requestToCurl: a
// `protocall curl`, `buf curl` or `grpcurl` command line (split as a shell would, parsed by the curl
// flag parser or grpcurl's flags) becomes a request that means the same thing. Flags become
// `# @flag value` options, `-H name: value` headers become header lines, inline `-d` data becomes the
// body and `-d @file` an include (`< file`). Text that reads as `{{...}}` is not escaped: in a request
// file it is a variable reference (the shell's `$NAME` becomes `{{$env NAME}}`). Header files
// (`-H @file`) become `# @header @file` options, which are read before the header lines.
import { ProtocallError } from "../errors";
import { parseCurlArgs } from "../invoke/curl-args";
import { curlFlags } from "../invoke/curl-flags";
import type { CurlOptions } from "../invoke/options";
import { curlArguments } from "./copy-as";
import { grpcurlToCurlOptions } from "./grpcurl-args";
import { type ShellItem, splitCommands } from "./shell-words";

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

/** What pasting a command line gives: the requests' text and what could not be carried over. */
export interface PastedRequests {
  /** One request per command, each named for its method, ending with a newline. */
  text: string;
  /** How many requests. */
  count: number;
  /** Which tool each command was for. */
  tools: ("buf curl" | "protocall curl" | "grpcurl")[];
  /** Flags and redirections a request cannot express, left out. */
  notes: string[];
}

/**
 * Turns pasted `buf curl`, `protocall curl` or `grpcurl` command lines (one or more commands, as a
 * shell would read them) into request text. Throws ProtocallError (what is wrong and how to fix it)
 * when the text is not such a command, or uses something a request cannot express.
 */
export function commandLineToRequests(text: string): PastedRequests {
  const commands = splitCommands(text);
  if (commands.length === 0) throw new ProtocallError(notACommand("the text is empty"));
  const blocks: string[] = [];
  const tools: PastedRequests["tools"] = [];
  const notes: string[] = [];
  for (const items of commands) {
    const { tool, options, notes: more } = commandOptions(items);
    tools.push(tool);
    notes.push(...more);
    if (options.data === "@-") {
      notes.push("the body was to come from standard input (-d @-): write it under the request instead");
    }
    blocks.push(curlToRequestText(options, requestName(options)));
  }
  return { text: blocks.join("\n"), count: blocks.length, tools, notes };
}

const notACommand = (what: string) =>
  `${what}: copy a buf curl, protocall curl or grpcurl command line, then paste it as a request`;

/** The tool of one command and its options. */
function commandOptions(items: ShellItem[]): {
  tool: PastedRequests["tools"][number];
  options: CurlOptions;
  notes: string[];
} {
  const words = items.flatMap((i) => ("word" in i ? [i.word] : []));
  const redirects = items.flatMap((i) => ("redirect" in i ? [i] : []));
  const notes: string[] = [];
  let input: string | undefined;
  for (const r of redirects) {
    if (r.redirect === "<") input = r.file;
    else notes.push(`the output redirection > ${r.file} was left out: set # @output ${r.file} to keep it`);
  }
  const at = programStart(words);
  const program = (words[at] ?? "").replace(/^.*[\\/]/, "").replace(/\.(exe|js|cmd)$/i, "");
  if (program === "grpcurl") {
    const r = grpcurlToCurlOptions(words.slice(at + 1), input);
    return { tool: "grpcurl", options: r.options, notes: [...notes, ...r.notes] };
  }
  if ((program === "buf" || program === "protocall") && words[at + 1] === "curl") {
    const { options, help } = parseCurlArgs(words.slice(at + 2));
    if (help) throw new ProtocallError(notACommand("the command asks for --help"));
    if (input !== undefined && options.data === "@-") options.data = `@${input}`;
    if (program === "buf") {
      // buf reads its repeatable flags' values as CSV (copy-as.ts writes them so).
      options.headers = options.headers.flatMap(csvFields);
      options.reflectHeaders = options.reflectHeaders.flatMap(csvFields);
      options.schemas = options.schemas.flatMap(csvFields);
    }
    if (!options.url)
      throw new ProtocallError(`the ${program} curl command names no URL: add the method's URL`);
    return { tool: program === "buf" ? "buf curl" : "protocall curl", options, notes };
  }
  const shown = words.slice(at, at + 2).join(" ");
  throw new ProtocallError(
    notACommand(`"${shown.length > 40 ? `${shown.slice(0, 39)}…` : shown}" is not one`),
  );
}

/** Where the program's name is: after a prompt (`$`), variable assignments and `npx`/`sudo`. */
function programStart(words: string[]): number {
  let i = 0;
  while (i < words.length) {
    const w = words[i];
    if (w === "$" || w === "%" || w === ">" || /^[A-Za-z_][A-Za-z0-9_]*=/.test(w)) i++;
    else if (w === "npx" || w === "sudo" || w === "exec" || w === "node") i++;
    else if ((w === "npm" || w === "pnpm" || w === "yarn") && words[i + 1] === "exec") i += 2;
    else if (w === "--" && i > 0) i++;
    else break;
  }
  return i;
}

/** The request's name: its method (`Greet`), or what a listing lists. */
function requestName(o: CurlOptions): string | undefined {
  if (o.listServices) return "List services";
  if (o.listMethods) return "List methods";
  const path = (o.url ?? "").replace(/^[a-z]+:\/\/[^/]*/i, "").replace(/[?#].*$/, "");
  const method = path.split("/").filter(Boolean).pop();
  return method && !method.includes("{{") ? method : undefined;
}

/** The fields of one CSV record (Go's encoding/csv): the inverse of copy-as's csvField. */
export function csvFields(value: string): string[] {
  const fields: string[] = [];
  let i = 0;
  for (;;) {
    if (value[i] === '"') {
      let field = "";
      let j = i + 1;
      for (;;) {
        const q = value.indexOf('"', j);
        if (q < 0)
          throw new ProtocallError(
            `the value ${JSON.stringify(value)} has an unclosed quote, as buf reads it (CSV)`,
          );
        field += value.slice(j, q);
        if (value[q + 1] === '"') {
          field += '"';
          j = q + 2;
          continue;
        }
        i = q + 1;
        break;
      }
      fields.push(field);
    } else {
      const comma = value.indexOf(",", i);
      fields.push(value.slice(i, comma < 0 ? value.length : comma));
      i = comma < 0 ? value.length : comma;
    }
    if (value[i] !== ",") return fields;
    i++;
  }
}
