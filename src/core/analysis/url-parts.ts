// The service and method segments of a request line's URL as written, with their ranges, for
// diagnostics, hover and completion: `{{host}}/demo.v1.GreetService/Greet`.
import type { Range, Token } from "../rpcfile/types";

export interface UrlSegment {
  text: string;
  /** Offsets in the URL's text. */
  start: number;
  end: number;
  range: Range;
}

export interface UrlParts {
  /** Where the path starts in the URL's text (the first `/` after the host or the `{{...}}` base). */
  pathStart: number;
  service?: UrlSegment;
  method?: UrlSegment;
}

/** Where the path of a URL starts: after `scheme://host`, or after a leading `{{...}}` reference. */
export function pathStart(text: string): number {
  const scheme = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//.exec(text);
  let from = 0;
  if (scheme) from = scheme[0].length;
  else if (text.startsWith("{{")) {
    const close = text.indexOf("}}");
    from = close < 0 ? text.length : close + 2;
  }
  const slash = text.indexOf("/", from);
  return slash < 0 ? text.length : slash;
}

function segment(url: Token, start: number, end: number): UrlSegment {
  const line = url.range.start.line;
  const c = url.range.start.character;
  return {
    text: url.text.slice(start, end),
    start,
    end,
    range: { start: { line, character: c + start }, end: { line, character: c + end } },
  };
}

/** Splits a URL token; the service is the next-to-last path segment, the method the last. */
export function urlParts(url: Token): UrlParts {
  const text = url.text.replace(/[?#].*$/, "");
  const start = pathStart(text);
  const parts: UrlParts = { pathStart: start };
  if (start >= text.length) return parts;
  const last = text.lastIndexOf("/");
  if (last === start) {
    parts.service = segment(url, start + 1, text.length);
    return parts;
  }
  const prev = text.lastIndexOf("/", last - 1);
  parts.service = segment(url, prev + 1, last);
  parts.method = segment(url, last + 1, text.length);
  return parts;
}

/** The service and method names of a resolved URL (`{{...}}` substituted). */
export function resolvedNames(url: string): { service?: string; method?: string } {
  const text = url.replace(/[?#].*$/, "");
  const start = pathStart(text);
  const segments = text.slice(start).split("/").slice(1);
  if (segments.length === 0) return {};
  if (segments.length === 1) return { service: segments[0] };
  return { service: segments[segments.length - 2], method: segments[segments.length - 1] };
}
