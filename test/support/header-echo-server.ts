// A server that records the raw request headers it receives (names and values exactly as they
// arrived, in order) and answers every request with HTTP 404 at once, for comparing what two clients
// send. Three listeners on loopback: HTTP/1.1, h2c (HTTP/2 with prior knowledge) and TLS (ALPN h2 or
// http/1.1, with the test PKI's server certificate). node:http and node:http2 keep the raw header
// list (`rawHeaders`), HTTP/2 pseudo-headers included.
import * as http from "node:http";
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import type { TestPki } from "./tls";

export interface RecordedRequest {
  httpVersion: string;
  /** Header fields in arrival order, names as they arrived (HTTP/2: lowercase, pseudo-headers first). */
  headers: [string, string][];
}

export interface HeaderEchoServer {
  h1Url: string;
  h2cUrl: string;
  tlsUrl: string;
  /** Every request received so far, in arrival order. */
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export async function startHeaderEchoServer(pki: TestPki): Promise<HeaderEchoServer> {
  const requests: RecordedRequest[] = [];
  const onRequest = (
    req: http.IncomingMessage | http2.Http2ServerRequest,
    res: http.ServerResponse | http2.Http2ServerResponse,
  ) => {
    const raw = req.rawHeaders;
    const headers: [string, string][] = [];
    for (let i = 0; i + 1 < raw.length; i += 2) headers.push([raw[i], raw[i + 1]]);
    requests.push({ httpVersion: req.httpVersion, headers });
    // Answer before reading the body: a stream that never ends (bidi, reflection) still gets its answer.
    res.writeHead(404);
    res.end();
    req.resume();
  };
  const h1 = http.createServer(onRequest);
  const h2c = http2.createServer(onRequest);
  const tls = http2.createSecureServer(
    { cert: pki.server.cert, key: pki.server.key, allowHTTP1: true },
    onRequest,
  );
  const listen = (server: http.Server | http2.Http2Server | http2.Http2SecureServer) =>
    new Promise<number>((resolve) =>
      server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)),
    );
  const [p1, p2, p3] = await Promise.all([listen(h1), listen(h2c), listen(tls)]);
  const sessions = new Set<http2.ServerHttp2Session>();
  for (const s of [h2c, tls])
    s.on("session", (session) => {
      sessions.add(session);
      session.once("close", () => sessions.delete(session));
    });
  return {
    h1Url: `http://127.0.0.1:${p1}`,
    h2cUrl: `http://127.0.0.1:${p2}`,
    tlsUrl: `https://127.0.0.1:${p3}`,
    requests,
    close: async () => {
      for (const s of sessions) s.destroy();
      h1.closeAllConnections();
      await Promise.all(
        [h1, h2c, tls].map((s) => new Promise<void>((resolve) => (s as http.Server).close(() => resolve()))),
      );
    },
  };
}
