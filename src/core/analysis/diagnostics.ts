// Diagnostics of a .rpc file: the parser's, the conversion's (undefined variables, bad option
// values), then the schema's: unknown service or method (with the closest names), body documents
// against the input message, more than one document for a method that takes one, and deprecated
// methods and fields as hints with the Deprecated tag; then `@assert` / `@capture` paths and values
// against the output type (assertion-check.ts). Where the fix is sure (the closest name), the
// diagnostic carries it as `data.replacement` for the quick fix.
import { readFileSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import type { DescMessage } from "@bufbuild/protobuf";
import {
  DiagnosticSeverity,
  DiagnosticTag,
  type Diagnostic as LspDiagnostic,
} from "vscode-languageserver-protocol";
import type { TextDocument } from "vscode-languageserver-textdocument";
import { closest } from "../closest";
import { parseLoadLine } from "../load/load-options";
import { positionIn } from "../rpcfile/parse";
import { isStubText } from "../rpcfile/stub-syntax";
import type { Diagnostic, Range, RpcRequest, Severity, Token } from "../rpcfile/types";
import type { Analyzer, RequestInfo } from "./analysis";
import { assertionDiagnostics } from "./assertion-check";
import { checkBody } from "./body-check";
import { parseJsonTree } from "./json-tree";
import { prefetchDocs } from "./schema-docs";
import type { SchemaStore } from "./schema-store";
import { stubFileDiagnostics } from "./stub-diagnostics";

const severities: Record<Severity, DiagnosticSeverity> = {
  error: DiagnosticSeverity.Error,
  warning: DiagnosticSeverity.Warning,
  information: DiagnosticSeverity.Information,
  hint: DiagnosticSeverity.Hint,
};

const source = "protocall";

function toLsp(d: Diagnostic): LspDiagnostic {
  const out: LspDiagnostic = { range: d.range, severity: severities[d.severity], message: d.message, source };
  if (d.code) out.code = d.code;
  if (d.replacement !== undefined) out.data = { replacement: d.replacement };
  return out;
}

/** A diagnostic; `replacement` is the text that fixes it at `range` (the quick fix, code-actions.ts). */
function make(
  range: Range,
  severity: DiagnosticSeverity,
  message: string,
  code: string,
  replacement?: string,
): LspDiagnostic {
  const d: LspDiagnostic = { range, severity, message, source, code };
  if (replacement !== undefined) d.data = { replacement };
  return d;
}

/**
 * Every diagnostic of the document's current version. `prefetchDocs` (default true) also loads the
 * hover text of each request's method in the background, for an editor about to hover; a one-off
 * check (`protocall check`) turns it off.
 */
export async function computeDiagnostics(
  analyzer: Analyzer,
  store: SchemaStore,
  doc: TextDocument,
  options: { prefetchDocs?: boolean } = {},
): Promise<LspDiagnostic[]> {
  const a = analyzer.get(doc);
  // A stub file of `protocall mock` is checked as stubs: its syntax, then against the schema.
  if (isStubText(doc.getText()))
    return (await stubFileDiagnostics(store, doc.getText(), a.baseDir)).map(toLsp);
  const out = a.file.diagnostics.map(toLsp);
  const infos = await Promise.all(a.file.requests.map((r) => analyzer.request(doc, r)));
  if (a.contextProblem) {
    out.push(
      make(
        { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
        DiagnosticSeverity.Error,
        a.contextProblem,
        "environment",
      ),
    );
  }
  const checks = await Promise.all(infos.map((info) => assertionDiagnostics(store, info)));
  for (const [i, info] of infos.entries()) {
    out.push(...requestDiagnostics(info, a.baseDir), ...checks[i], ...loadLineDiagnostics(info.request));
    if (info.method && info.schema && options.prefetchDocs !== false)
      prefetchDocs(store, info.schema, info.method);
  }
  return out;
}

/** The problems of a request's `# @load` lines, each at its word (the whole line when it has no place). */
function loadLineDiagnostics(request: RpcRequest): LspDiagnostic[] {
  const out: LspDiagnostic[] = [];
  for (const line of request.load ?? []) {
    const at = line.valueRange?.start ?? line.range.end;
    for (const p of parseLoadLine(line.text).problems) {
      const range =
        p.end > p.start
          ? {
              start: { line: at.line, character: at.character + p.start },
              end: { line: at.line, character: at.character + p.end },
            }
          : line.range;
      out.push(make(range, DiagnosticSeverity.Error, p.message, "invalid-load"));
    }
  }
  return out;
}

function requestDiagnostics(info: RequestInfo, baseDir: string): LspDiagnostic[] {
  const out = info.conversion.map(toLsp);
  const request = info.request;
  const schema = info.schema;
  if (!schema || !request.url) return out;
  for (const p of schema.problems) {
    // The conversion made relative @schema paths absolute.
    const option = request.options.find(
      (o) =>
        o.name.text === "schema" && o.value && resolve(baseDir, o.value.text) === resolve(baseDir, p.what),
    );
    const range = option?.value?.range ?? request.url.range;
    out.push(
      make(
        range,
        option ? DiagnosticSeverity.Error : DiagnosticSeverity.Information,
        `cannot load the schema from ${p.what}: ${p.problem}`,
        "schema-unavailable",
      ),
    );
  }
  if (!info.serviceName || (schema.sources.length === 0 && schema.incomplete.length === 0)) return out;
  const urlRange = request.url.range;
  const serviceRange =
    info.url?.service && info.url.service.text === info.serviceName ? info.url.service.range : urlRange;
  const methodRange =
    info.url?.method && info.url.method.text === info.methodName ? info.url.method.range : urlRange;
  const lookup = info.lookup;
  if (!lookup) return out;
  if (!lookup.service) {
    if (schema.incomplete.length > 0 && lookup.failures.length === 0) {
      out.push(
        make(
          serviceRange,
          DiagnosticSeverity.Information,
          `service "${info.serviceName}" is not in the schema, but the schema is incomplete: ${schema.incomplete.join("; ")}`,
          "schema-incomplete",
        ),
      );
      return out;
    }
    if (lookup.failures.length > 0) {
      out.push(
        make(
          serviceRange,
          DiagnosticSeverity.Information,
          `service "${info.serviceName}" is not in the workspace's schema, and it cannot be checked against the server: ${lookup.failures.join("; ")}`,
          "schema-unavailable",
        ),
      );
      return out;
    }
    const hint = closest(info.serviceName, lookup.known ?? []);
    out.push(
      make(
        serviceRange,
        DiagnosticSeverity.Error,
        `unknown service "${info.serviceName}"${hint.length > 0 ? `; did you mean ${hint.map((h) => `"${h}"`).join(" or ")}?` : ""} (looked in ${schema.sources.map((s) => s.label).join(", ")})`,
        "unknown-service",
        serviceRange !== urlRange ? hint[0] : undefined,
      ),
    );
    return out;
  }
  const service = lookup.service;
  if (info.methodName === undefined || info.methodName === "") {
    out.push(
      make(
        urlRange,
        DiagnosticSeverity.Error,
        `the URL names no method: add /<Method> after ${service.typeName} (its methods: ${service.methods.map((m) => m.name).join(", ")})`,
        "missing-method",
      ),
    );
    return out;
  }
  const method = info.method;
  if (!method) {
    const names = service.methods.map((m) => m.name);
    const hint = closest(info.methodName, names);
    out.push(
      make(
        methodRange,
        DiagnosticSeverity.Error,
        `unknown method "${info.methodName}" of service ${service.typeName}${hint.length > 0 ? `; did you mean ${hint.map((h) => `"${h}"`).join(" or ")}?` : ""} (its methods: ${names.join(", ")})`,
        "unknown-method",
        methodRange !== urlRange ? hint[0] : undefined,
      ),
    );
    return out;
  }
  if (method.deprecated) {
    const d = make(
      methodRange,
      DiagnosticSeverity.Hint,
      `method ${service.typeName}.${method.name} is deprecated`,
      "deprecated",
    );
    d.tags = [DiagnosticTag.Deprecated];
    out.push(d);
  }
  const single = method.methodKind === "unary" || method.methodKind === "server_streaming";
  let count = 0;
  for (const part of request.body) {
    count++;
    if (single && count > 1) {
      out.push(
        make(
          part.range,
          DiagnosticSeverity.Error,
          `${method.name} is a ${method.methodKind === "unary" ? "unary" : "server-streaming"} method: it takes exactly one request message; remove this document (several documents are for client and bidi streaming methods)`,
          "too-many-documents",
        ),
      );
    }
    if (part.kind === "include") {
      out.push(...includeDiagnostics(part.path, baseDir, method.input));
      continue;
    }
    const tree = parseJsonTree(part.text);
    if (!tree) continue;
    for (const p of checkBody(tree, method.input)) {
      const range = {
        start: positionIn(part.text, part.range.start, p.start),
        end: positionIn(part.text, part.range.start, p.end),
      };
      const d = make(
        range,
        p.severity === "hint" ? DiagnosticSeverity.Hint : DiagnosticSeverity.Error,
        p.message,
        p.deprecated ? "deprecated" : "body",
        p.replacement,
      );
      if (p.deprecated) d.tags = [DiagnosticTag.Deprecated];
      out.push(d);
    }
  }
  return out;
}

/** Checks an included JSON file against the input message; problems are reported on the include line. */
function includeDiagnostics(path: Token, baseDir: string, input: DescMessage): LspDiagnostic[] {
  if (path.text.includes("{{")) return [];
  const full = isAbsolute(path.text) ? path.text : resolve(baseDir, path.text);
  let text: string;
  try {
    // Request files include small JSON documents; a missing file is reported by the conversion.
    text = readFileSync(full, "utf8");
  } catch {
    return [];
  }
  if (text.length > 1 << 20) return [];
  const out: LspDiagnostic[] = [];
  const tree = parseJsonTree(text);
  if (!tree) return out;
  for (const p of checkBody(tree, input)) {
    const at = positionIn(text, { line: 0, character: 0 }, p.start);
    const d = make(
      path.range,
      p.severity === "hint" ? DiagnosticSeverity.Hint : DiagnosticSeverity.Error,
      `${path.text}:${at.line + 1}:${at.character + 1}: ${p.message}`,
      p.deprecated ? "deprecated" : "body",
    );
    if (p.deprecated) d.tags = [DiagnosticTag.Deprecated];
    out.push(d);
  }
  return out;
}
