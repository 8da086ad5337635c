// Fills the `{{...}}` references of an answer when it is sent:
//   {{request.name}}, {{requests[1].id}}, {{headers["x-tenant"]}}   values of the request, by a path
//                      of the assertion language (stub-match.ts explains `request` and `requests`)
//   {{name}}, {{$uuid}}, {{$randomInt 1 10}}, …   file variables and generators, as request files
//                      resolve them (../rpcfile/variables.ts), fresh for every answer
// In JSON, a reference inside a string is replaced by the value's text (escaped for the string); a
// reference standing alone is replaced by the value as JSON (`"count": {{request.count}}` stays a
// number). A reference that leads nowhere is an error naming it, never an empty value.
import type { JsonValue } from "@bufbuild/protobuf";
import { lookupPath } from "../assertions/evaluate";
import type { CallOutcome } from "../assertions/outcome";
import { ProtocallError } from "../errors";
import { parseAssertion } from "../rpcfile/assertion-syntax";
import type { Diagnostic, RpcVariable } from "../rpcfile/types";
import { VariableResolver } from "../rpcfile/variables";

const requestRef = /\{\{\s*((?:requests?|headers)(?:[.[][^}]*)?)\s*\}\}/g;

/** The value a request path leads to (`request.name`), or an error saying why there is none. */
function requestValue(path: string, outcome: CallOutcome, where: string): JsonValue {
  const rewritten = path.replace(/^requests(?=[.[]|$)/, "messages").replace(/^request(?=[.[]|$)/, "message");
  const r = { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } };
  const { assertion } = parseAssertion({ text: `${rewritten} exists`, range: r }, r);
  if (!assertion) throw new ProtocallError(`${where}: {{${path}}} is not a path of the request`);
  const found = lookupPath(outcome, assertion.path);
  if (!found.found) {
    throw new ProtocallError(`${where}: {{${path}}} leads to nothing in this request (${found.reason})`);
  }
  return found.value;
}

/** Whether position `at` of JSON text is inside a string. */
function insideString(text: string, at: number): boolean {
  let inside = false;
  for (let i = 0; i < at; i++) {
    const c = text[i];
    if (inside && c === "\\") i++;
    else if (c === '"') inside = !inside;
  }
  return inside;
}

export interface TemplateScope {
  readonly outcome: CallOutcome;
  readonly variables: readonly RpcVariable[];
  readonly env: NodeJS.ProcessEnv;
  /** `file:line` for errors. */
  readonly where: string;
}

/** Fills the references of a text; `json` says whether the text is a JSON document. */
export function fillTemplate(text: string, scope: TemplateScope, json: boolean): string {
  if (!text.includes("{{")) return text;
  let out = "";
  let last = 0;
  requestRef.lastIndex = 0;
  for (let m = requestRef.exec(text); m; m = requestRef.exec(text)) {
    out += text.slice(last, m.index);
    last = m.index + m[0].length;
    const value = requestValue(m[1].trim(), scope.outcome, scope.where);
    if (json && !insideString(text, m.index)) out += JSON.stringify(value);
    else {
      const plain = typeof value === "string" ? value : JSON.stringify(value);
      out += json ? JSON.stringify(plain).slice(1, -1) : plain;
    }
  }
  out += text.slice(last);
  if (!out.includes("{{")) return out;
  const diagnostics: Diagnostic[] = [];
  const resolver = new VariableResolver({
    fileVariables: scope.variables,
    environment: {},
    processEnv: scope.env,
    dotenv: {},
  });
  const r = { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } };
  const filled = resolver.resolve({ text: out, range: r }, diagnostics);
  if (diagnostics.length > 0) throw new ProtocallError(`${scope.where}: ${diagnostics[0].message}`);
  return filled;
}
