// Fills the `{{...}}` references of an answer when it is sent:
//   {{request.name}}, {{requests[1].id}}, {{headers["x-tenant"]}}   values of the request, by a path
//                      of the assertion language (stub-match.ts explains `request` and `requests`)
//   {{name}}, {{$uuid}}, {{$randomInt 1 10}}, …   file variables and generators, as request files
//                      resolve them (../rpcfile/variables.ts), fresh for every answer
// In JSON, a reference inside a string is replaced by the value's text (escaped for the string); a
// reference standing alone is replaced by the value as JSON (`"count": {{request.count}}` stays a
// number). A reference that leads nowhere is an error naming it, never an empty value.
//
// A text whose value is the same on every call (no request value, no generator, no process
// environment; only file variables and literals) is filled once per stub set and reused: a stub's
// answer is filled on every call, and building a resolver for it was a large part of a call's work.
import { randomUUID } from "node:crypto";
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
  /** The stub's file, for errors (`file:line`, with the line given to fillTemplate). */
  readonly where: string;
}

/**
 * Filled texts that are the same on every call, by the file variables they were filled with (a
 * reloaded file has new ones, so its old fills are dropped with it), then by the text.
 */
const fixedFills = new WeakMap<readonly RpcVariable[], Map<string, string>>();

/**
 * Fills the references of a text; `json` says whether the text is a JSON document; `line` (from 1)
 * is where the text is in the stub's file, for errors.
 */
export function fillTemplate(text: string, scope: TemplateScope, json: boolean, line?: number): string {
  if (!text.includes("{{")) return text;
  const where = line === undefined ? scope.where : `${scope.where}:${line}`;
  const known = fixedFills.get(scope.variables)?.get(text);
  if (known !== undefined) return known;
  let out = "";
  let last = 0;
  let fromRequest = false;
  requestRef.lastIndex = 0;
  for (let m = requestRef.exec(text); m; m = requestRef.exec(text)) {
    fromRequest = true;
    out += text.slice(last, m.index);
    last = m.index + m[0].length;
    const value = requestValue(m[1].trim(), scope.outcome, where);
    if (json && !insideString(text, m.index)) out += JSON.stringify(value);
    else {
      const plain = typeof value === "string" ? value : JSON.stringify(value);
      out += json ? JSON.stringify(plain).slice(1, -1) : plain;
    }
  }
  out += text.slice(last);
  if (!out.includes("{{")) return out;
  // Whether the value can differ from one call to the next: a generator drew a fresh value, or the
  // process environment was read (it is the live one).
  let varies = fromRequest;
  const diagnostics: Diagnostic[] = [];
  const resolver = new VariableResolver({
    fileVariables: scope.variables,
    environment: {},
    processEnv: new Proxy(scope.env, {
      get: (env, name) => {
        varies = true;
        return Reflect.get(env, name);
      },
    }),
    dotenv: {},
    uuid: () => {
      varies = true;
      return randomUUID();
    },
    random: () => {
      varies = true;
      return Math.random();
    },
    now: () => {
      varies = true;
      return new Date();
    },
  });
  const r = { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } };
  const filled = resolver.resolve({ text: out, range: r }, diagnostics);
  if (diagnostics.length > 0) throw new ProtocallError(`${where}: ${diagnostics[0].message}`);
  if (!varies) {
    let fills = fixedFills.get(scope.variables);
    if (!fills) fixedFills.set(scope.variables, (fills = new Map()));
    if (fills.size < 1000) fills.set(text, filled);
  }
  return filled;
}
