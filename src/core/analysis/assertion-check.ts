// `@assert` and `@capture` against the schema: each path is followed through the method's output
// type (core/rpcfile/response-path.ts), error detail types are looked up in the request's schema and
// in google/rpc/error_details.proto (which every server may send), and values are checked against
// what the path holds. Problems become diagnostics whose `data.replacement` the quick fix applies.
import { createRegistry, type DescMessage } from "@bufbuild/protobuf";
import { DiagnosticSeverity, type Diagnostic as LspDiagnostic } from "vscode-languageserver-protocol";
import { file_google_rpc_error_details } from "../../gen/google/rpc/error_details_pb";
import type { ResponsePath } from "../rpcfile/assertion-syntax";
import {
  checkAssertionValue,
  type PathResolution,
  resolveResponsePath,
  type SchemaProblem,
} from "../rpcfile/response-path";
import type { RequestInfo } from "./analysis";
import type { RequestSchema, SchemaStore } from "./schema-store";

const standardDetails = createRegistry(file_google_rpc_error_details);

/** Finds an error detail type: the request's schema first, then the standard detail types. */
export function findDetailType(
  store: SchemaStore,
  schema: RequestSchema | undefined,
  name: string,
): Promise<DescMessage | undefined> {
  return store.remember(`detail-type\u0000${schema?.key ?? ""}\u0000${name}`, async () => {
    for (const source of schema?.sources ?? []) {
      try {
        const found = await source.findType(name);
        if (found?.kind === "message") return found;
      } catch {
        // An unreachable source: the standard types may still have it.
      }
    }
    return standardDetails.getMessage(name);
  });
}

/** The detail types a path names, looked up, as the synchronous look-up resolveResponsePath takes. */
async function detailLookup(
  store: SchemaStore,
  schema: RequestSchema | undefined,
  paths: readonly ResponsePath[],
): Promise<(name: string) => DescMessage | undefined> {
  const found = new Map<string, DescMessage | undefined>();
  for (const p of paths) {
    for (const s of p.segments) {
      if (s.kind === "type" && !found.has(s.typeName)) {
        found.set(s.typeName, await findDetailType(store, schema, s.typeName));
      }
    }
  }
  return (name) => found.get(name) ?? standardDetails.getMessage(name);
}

/** Follows one path of a request whose method is known. */
export async function resolvePath(
  store: SchemaStore,
  info: RequestInfo,
  path: ResponsePath,
): Promise<PathResolution | undefined> {
  if (!info.method) return undefined;
  return resolveResponsePath(path, info.method, await detailLookup(store, info.schema, [path]));
}

function toLsp(p: SchemaProblem): LspDiagnostic {
  const d: LspDiagnostic = {
    range: p.range,
    severity: p.severity === "warning" ? DiagnosticSeverity.Warning : DiagnosticSeverity.Error,
    message: p.message,
    source: "protocall",
    code: p.code,
  };
  if (p.replacement !== undefined) d.data = { replacement: p.replacement };
  return d;
}

/** Diagnostics of a request's assertions and captures against its method's output type. */
export async function assertionDiagnostics(store: SchemaStore, info: RequestInfo): Promise<LspDiagnostic[]> {
  const method = info.method;
  const request = info.request;
  if (!method || (request.assertions.length === 0 && request.captures.length === 0)) return [];
  const lookup = await detailLookup(store, info.schema, [
    ...request.assertions.map((a) => a.path),
    ...request.captures.map((c) => c.path),
  ]);
  const out: LspDiagnostic[] = [];
  for (const a of request.assertions) {
    const r = resolveResponsePath(a.path, method, lookup);
    if (r.problem) out.push(toLsp(r.problem));
    else out.push(...checkAssertionValue(a, r).map(toLsp));
  }
  for (const c of request.captures) {
    const r = resolveResponsePath(c.path, method, lookup);
    if (r.problem) out.push(toLsp(r.problem));
  }
  return out;
}
