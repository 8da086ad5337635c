// What the mock answers before a call reaches its handler: CORS (preflight requests answered, the
// origin allowed, with credentials too, and every header exposed, so pages can call with Connect or
// gRPC-Web, cookies or not) and the admin path (the call log, the stubs, reset), plain HTTP/JSON on
// the same port.
import type { OutgoingHttpHeaders } from "node:http";
import { cors } from "@connectrpc/connect";
import type { CallLog } from "./call-log";
import type { NodeHandler } from "./listen";
import { methodKey } from "./mock-schema";
import type { StubSet } from "./stub-set";

export const adminPrefix = "/.protocall/mock/";

/** `handler` behind CORS and the admin path. */
export function withCorsAndAdmin(handler: NodeHandler, admin: NodeHandler): NodeHandler {
  return (req, res) => {
    const origin = req.headers.origin;
    if (origin) {
      res.setHeader("access-control-allow-origin", origin);
      res.setHeader("vary", "origin");
      res.setHeader("access-control-allow-credentials", "true");
      if (req.method === "OPTIONS") {
        res.writeHead(204, {
          "access-control-allow-methods": cors.allowedMethods.join(", "),
          "access-control-allow-headers": String(
            req.headers["access-control-request-headers"] ?? cors.allowedHeaders.join(", "),
          ),
          "access-control-max-age": "7200",
        });
        res.end();
        return;
      }
      exposeEveryHeader(res);
    }
    if ((req.url ?? "").startsWith(adminPrefix)) {
      admin(req, res);
      return;
    }
    handler(req, res);
  };
}

/**
 * Lets the page read every header of the answer: `*` for a page without credentials, and each header
 * by name (connect's protocol headers and those the answer has when it writes them), because for a
 * page that sends its cookies `*` is no wildcard.
 */
function exposeEveryHeader(res: Parameters<NodeHandler>[1]): void {
  const names = (extra: OutgoingHttpHeaders | undefined) => {
    const all = new Set(["*", ...cors.exposedHeaders.map((h) => h.toLowerCase())]);
    for (const name of [...res.getHeaderNames(), ...Object.keys(extra ?? {})]) {
      const lower = name.toLowerCase();
      if (!lower.startsWith("access-control-") && lower !== "vary") all.add(lower);
    }
    return [...all].join(", ");
  };
  res.setHeader("access-control-expose-headers", names(undefined));
  const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => unknown;
  (res as { writeHead: (...args: unknown[]) => unknown }).writeHead = (...args: unknown[]) => {
    const headers = args.find(
      (a): a is OutgoingHttpHeaders => typeof a === "object" && a !== null && !Array.isArray(a),
    );
    res.setHeader("access-control-expose-headers", names(headers));
    return writeHead(...args);
  };
}

/** The admin path: GET calls, GET stubs, POST reset. */
export function adminHandler(log: CallLog, stubs: StubSet): NodeHandler {
  return (req, res) => {
    const path = (req.url ?? "").split("?", 1)[0].slice(adminPrefix.length);
    const send = (status: number, body: unknown) => {
      const text = `${JSON.stringify(body, null, 2)}\n`;
      res.writeHead(status, {
        "content-type": "application/json",
        "content-length": Buffer.byteLength(text),
      });
      res.end(text);
    };
    req.resume();
    if (path === "calls" && req.method === "GET") return send(200, { calls: log.list() });
    if (path === "stubs" && req.method === "GET") {
      return send(200, {
        stubs: stubs.all().map((s) => ({
          stub: s.label,
          method: methodKey(s.method),
          priority: s.priority,
          answers: s.answers.length,
        })),
      });
    }
    if (path === "reset" && req.method === "POST") {
      log.clear();
      stubs.reset();
      return send(200, { reset: true });
    }
    send(404, {
      error: `unknown admin path ${req.method} ${adminPrefix}${path}: use GET ${adminPrefix}calls, GET ${adminPrefix}stubs or POST ${adminPrefix}reset`,
    });
  };
}
