// Hover: the method or service in the URL, a JSON key in a body (its field), an enum value in a body,
// and request options (the flag's help). Markdown comes from the schema engine's renderDocs.
import type { Hover, Position } from "vscode-languageserver";
import type { TextDocument } from "vscode-languageserver-textdocument";
import { curlFlagsByName } from "../core/invoke/curl-flags";
import { positionIn } from "../core/rpcfile/parse";
import { requestAt } from "../core/rpcfile/request-at";
import type { Range } from "../core/rpcfile/types";
import { fullNameOf } from "../core/schema/lookup";
import type { Analyzer } from "./analysis";
import { bodyPlace } from "./body-location";
import { hoverMarkdown } from "./schema-docs";
import type { SchemaStore } from "./schema-store";

export function within(r: Range, p: Position): boolean {
  if (p.line < r.start.line || p.line > r.end.line) return false;
  if (p.line === r.start.line && p.character < r.start.character) return false;
  if (p.line === r.end.line && p.character > r.end.character) return false;
  return true;
}

function markdown(value: string, range: Range): Hover {
  return { contents: { kind: "markdown", value }, range };
}

export async function hover(
  analyzer: Analyzer,
  store: SchemaStore,
  doc: TextDocument,
  p: Position,
): Promise<Hover | null> {
  const a = analyzer.get(doc);
  const request = requestAt(a.file, p);
  if (!request) return null;
  for (const o of request.options) {
    if (within(o.name.range, p)) {
      const flag = curlFlagsByName.get(o.name.text);
      if (flag) return markdown(`**@${flag.name}** (\`--${flag.name}\`)\n\n${flag.help}`, o.name.range);
    }
  }
  const url = request.url;
  const inUrl = url && within(url.range, p);
  const inBody = request.bodyRange && within(request.bodyRange, p);
  if (!inUrl && !inBody) return null;
  const info = await analyzer.request(doc, request);
  if (!info.schema) return null;
  if (inUrl) {
    const parts = info.url;
    if (parts?.method && info.method && within(parts.method.range, p)) {
      const m = info.method;
      return markdown(await hoverMarkdown(store, info.schema, fullNameOf(m), m), parts.method.range);
    }
    const service = info.lookup?.service;
    if (parts?.service && service && within(parts.service.range, p)) {
      return markdown(
        await hoverMarkdown(store, info.schema, service.typeName, service),
        parts.service.range,
      );
    }
    return null;
  }
  const method = info.method;
  if (!method) return null;
  const place = bodyPlace(request, method.input, p);
  const token = place?.location.token;
  if (!place || !token || !place.field) return null;
  const range = {
    start: positionIn(place.part.text, place.part.range.start, token.start),
    end: positionIn(place.part.text, place.part.range.start, token.end),
  };
  const field = place.field;
  if (place.location.role === "key") {
    return markdown(await hoverMarkdown(store, info.schema, fullNameOf(field), field), range);
  }
  if (token.kind === "string" && field.enum) {
    const value = field.enum.values.find((v) => v.name === token.value);
    if (value) return markdown(await hoverMarkdown(store, info.schema, fullNameOf(value), value), range);
  }
  return null;
}
