// The schema check of a stub's JSON documents, in one place for the mock and the editor: request
// bodies and `# @when {…}` subsets against the method's input type, answer messages against its
// output type, `# @detail TYPE JSON` against TYPE. Problems sit on the key or value at fault (not on
// the document's first character), unknown fields name the field meant, and when the fix is sure
// (the closest field name) the diagnostic carries it as `replacement`, which the editor offers as a
// quick fix. The mock's load errors (stub-load.ts, file:line:col on reload) and the language
// server's diagnostics of stub files both come from here, so they say the same thing at the same place.
import type { DescMessage, DescMethod } from "@bufbuild/protobuf";
import { closest } from "../closest";
import { positionIn } from "../rpcfile/parse";
import type { ParsedStub, StubDocument } from "../rpcfile/stub-syntax";
import type { Diagnostic } from "../rpcfile/types";
import { checkBody } from "./body-check";
import { parseJsonTree } from "./json-tree";

/**
 * The problems of one document (as written, `{{…}}` allowed wherever a value may be) as a message of
 * `desc`; none for an include (its text is elsewhere) or text that is not JSON (the caller reports it).
 */
export function stubDocumentProblems(doc: StubDocument, desc: DescMessage): Diagnostic[] {
  if (doc.include) return [];
  const tree = parseJsonTree(doc.text);
  if (!tree) return [];
  const start = { line: doc.line, character: doc.character };
  return checkBody(tree, desc).map((p) => {
    const d: Diagnostic = {
      severity: p.severity,
      message: p.message,
      range: { start: positionIn(doc.text, start, p.start), end: positionIn(doc.text, start, p.end) },
      code: p.deprecated ? "deprecated" : "invalid-body",
    };
    if (p.replacement !== undefined) d.replacement = p.replacement;
    return d;
  });
}

/**
 * Every document of a stub checked against its method: the request part and `@when` subsets as the
 * input type, answers as the output type, details as their own type (`messageType` finds it; an
 * unknown detail type is reported by the caller, which knows the names to suggest).
 */
export function checkStubDocuments(
  stub: ParsedStub,
  method: DescMethod,
  messageType: (name: string) => DescMessage | undefined,
): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const doc of stub.body) out.push(...stubDocumentProblems(doc, method.input));
  for (const a of stub.answers) {
    if (a.whenBody) out.push(...stubDocumentProblems(a.whenBody, method.input));
    for (const m of a.messages) out.push(...stubDocumentProblems(m, method.output));
    for (const d of a.details) {
      const desc = messageType(d.type);
      if (desc) out.push(...stubDocumentProblems(d.json, desc));
    }
  }
  return out;
}

/** A stub's method that the schema lacks, with the closest of `candidates` (`package.Service/Method`). */
export function unknownMethodProblem(name: string, line: number, candidates: Iterable<string>): Diagnostic {
  const [hint] = closest(name, candidates);
  return {
    severity: "error",
    message: `the schema has no method ${name}${hint ? ` (did you mean ${hint}?)` : ""}`,
    range: { start: { line, character: 0 }, end: { line, character: 0 } },
    code: "unknown-method",
  };
}

/** An error detail's type that the schema lacks, with the closest of `candidates` (message names). */
export function unknownDetailTypeProblem(
  type: string,
  line: number,
  character: number,
  candidates: Iterable<string>,
): Diagnostic {
  const [hint] = closest(type, candidates);
  return {
    severity: "error",
    message: `unknown detail type ${type}${hint ? ` (did you mean ${hint}?)` : ""}: a detail is a message of the schema or google.rpc.*`,
    range: { start: { line, character }, end: { line, character } },
    code: "unknown-type",
  };
}
