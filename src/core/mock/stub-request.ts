// "Call this stub": a stub's request part as a request file of its own, aimed at a running mock, so
// the editor sends it with the one Send (same panel, same checks) and the mock answers it with the
// stub. The request keeps the stub's file variables, headers and body documents; `@match` predicates
// are not requests' options and are left out (the mock still applies them).
import { isAbsolute, resolve } from "node:path";
import { parseStubFile } from "../rpcfile/stub-syntax";

/** The request file that calls stub `index` (in file order) of a stub file's text, at `baseUrl`. */
export function stubRequestText(
  text: string,
  index: number,
  baseUrl: string,
  /** The stub file's folder, against which relative `< file` includes are resolved. */
  baseDir: string,
): string | undefined {
  const parsed = parseStubFile(text);
  const stub = parsed.stubs[index];
  if (!stub) return undefined;
  const lines: string[] = [];
  for (const v of parsed.variables) lines.push(`@${v.name.text} = ${v.value.text}`);
  if (lines.length > 0) lines.push("");
  lines.push(`### ${stub.name ?? `call ${stub.method}`}`);
  lines.push(`${baseUrl.replace(/\/+$/, "")}/${stub.method}`);
  for (const h of stub.headers) lines.push(`${h.name.text}: ${h.value.text}`);
  lines.push("");
  for (const doc of stub.body) {
    if (doc.include) {
      lines.push(`< ${isAbsolute(doc.include) ? doc.include : resolve(baseDir, doc.include)}`);
    } else lines.push(doc.text);
  }
  // A client stream with no document still sends (and closes) a stream; a unary call needs one.
  if (stub.body.length === 0) lines.push("{}");
  return `${lines.join("\n")}\n`;
}
