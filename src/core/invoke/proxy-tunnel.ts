// An HTTP CONNECT tunnel through a proxy: the one way every connection of a call (TLS, h2c, HTTP/1.1)
// reaches its server when a proxy is configured (proxy-choice.ts). The tunnel is a plain socket to the
// server; TLS and HTTP run over it end to end, as Go's transport (and so `buf curl`) does. Written on
// `net` alone (no proxy-agent package) because the transport dials its own sockets for HTTP/1.1 and
// HTTP/2 alike. A proxy that refuses, or asks for credentials, is a clear `unavailable` error.
import * as net from "node:net";
import * as tls from "node:tls";
import { Code, ConnectError } from "@connectrpc/connect";
import { shownProxy } from "./proxy-choice";
import type { VerboseLog } from "./verbose";

export interface TunnelOptions {
  /** The proxy, from chooseProxy (credentials in its URL are sent as Basic Proxy-Authorization). */
  proxy: string;
  /** Where the proxy was configured (`HTTPS_PROXY`, `--proxy`, …), for messages. */
  from: string;
  /** False: an https proxy's certificate is not verified (ProxyChoice.strictSSL). */
  strictSSL?: boolean;
  /** The server's host (a name or an IP literal, without brackets) and port. */
  host: string;
  port: number;
  log: VerboseLog;
  /** Milliseconds to reach the proxy and have the tunnel; undefined = no limit. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** The longest proxy answer read before giving up on it. */
const MAX_ANSWER = 64 * 1024;

/** Opens a CONNECT tunnel to host:port; resolves with the socket that reaches the server. */
export function openTunnel(o: TunnelOptions): Promise<net.Socket> {
  const proxy = new URL(o.proxy);
  const proxyHost = proxy.hostname.startsWith("[") ? proxy.hostname.slice(1, -1) : proxy.hostname;
  const proxyPort = Number(proxy.port || (proxy.protocol === "https:" ? 443 : 80));
  const authority = `${net.isIPv6(o.host) ? `[${o.host}]` : o.host}:${o.port}`;
  const shown = shownProxy(o.proxy);
  o.log.info(`Using proxy ${shown} (from ${o.from}) for ${authority}`);
  o.log.info(`Dialing (tcp) ${proxy.host}...`);
  const socket: net.Socket =
    proxy.protocol === "https:"
      ? tls.connect({
          host: proxyHost,
          port: proxyPort,
          servername: net.isIP(proxyHost) ? undefined : proxyHost,
          rejectUnauthorized: o.strictSSL !== false,
        })
      : net.connect({ host: proxyHost, port: proxyPort });
  socket.setNoDelay(true);
  return new Promise((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      if (timer) clearTimeout(timer);
      socket.off("readable", onReadable);
      socket.off("error", onError);
      socket.off("end", onEnd);
      o.signal?.removeEventListener("abort", onAbort);
    };
    const fail = (message: string, code: Code = Code.Unavailable) => {
      cleanup();
      socket.destroy();
      reject(new ConnectError(message, code));
    };
    const onError = (err: NodeJS.ErrnoException) =>
      /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS_CERT/.test(String(err.code))
        ? fail(
            `proxyconnect tcp: tls: ${err.message} (the certificate of the proxy ${shown} from ${o.from} is not trusted; add its CA to NODE_EXTRA_CA_CERTS, or set PROTOCALL_PROXY_STRICT_SSL=false (in the editor: http.proxyStrictSSL) to skip checking it)`,
          )
        : fail(
            `proxyconnect tcp: dial tcp ${proxy.host}: ${err.code === "ECONNREFUSED" ? "connect: connection refused" : err.message} (the proxy ${shown} from ${o.from} cannot be reached; check the proxy address)`,
          );
    const onEnd = () => fail(`proxy ${shown} closed the connection before answering CONNECT ${authority}`);
    const onAbort = () => fail("the call was canceled", Code.Canceled);
    // Read in paused mode ("readable"), so that once the listener is gone the socket is neither
    // flowing nor paused and whoever uses it next (HTTP, TLS) gets every byte after the answer.
    const onReadable = () => {
      let chunk: Buffer | null;
      let got = false;
      while ((chunk = socket.read() as Buffer | null) !== null) {
        chunks.push(chunk);
        size += chunk.length;
        got = true;
      }
      if (!got) return;
      const all = Buffer.concat(chunks, size);
      const end = all.indexOf("\r\n\r\n");
      if (end < 0) {
        if (size > MAX_ANSWER) fail(`proxy ${shown} sent an answer to CONNECT without an end of headers`);
        return;
      }
      const head = all.subarray(0, end).toString("latin1");
      const statusLine = head.split("\r\n")[0] ?? "";
      const m = /^HTTP\/\d(?:\.\d)? (\d{3})\s*(.*)$/.exec(statusLine);
      if (!m) {
        fail(
          `proxy ${shown} did not answer CONNECT with HTTP (it sent ${JSON.stringify(statusLine.slice(0, 80))}); check that it is an HTTP proxy`,
        );
        return;
      }
      const status = Number(m[1]);
      const reason = `${m[1]} ${m[2] ?? ""}`.trim();
      // 407 is the standard answer; some proxies (tinyproxy) answer 401.
      if (status === 407 || status === 401) {
        fail(
          proxy.username
            ? `proxy ${shown} rejected the credentials in the proxy URL from ${o.from} (${reason}); check the user name and password`
            : `proxy ${shown} asks for credentials (${reason}); put them in the proxy URL from ${o.from}: http://user:password@host:port`,
          Code.Unauthenticated,
        );
        return;
      }
      if (status < 200 || status > 299) {
        fail(`proxy ${shown} refused CONNECT ${authority}: ${reason}`);
        return;
      }
      cleanup();
      o.log.info(`Proxy tunnel to ${authority} open (${reason})`);
      const rest = all.subarray(end + 4);
      if (rest.length > 0) socket.unshift(rest);
      resolve(socket);
    };
    if (o.timeoutMs !== undefined) {
      timer = setTimeout(
        () => fail(`proxyconnect tcp: dial tcp ${proxy.host}: i/o timeout`, Code.DeadlineExceeded),
        o.timeoutMs,
      );
    }
    if (o.signal?.aborted) {
      onAbort();
      return;
    }
    o.signal?.addEventListener("abort", onAbort, { once: true });
    socket.on("error", onError);
    socket.on("end", onEnd);
    socket.on("readable", onReadable);
    socket.once(proxy.protocol === "https:" ? "secureConnect" : "connect", () => {
      o.log.info(`Connected to proxy ${proxy.host}`);
      const lines = [`CONNECT ${authority} HTTP/1.1`, `Host: ${authority}`];
      if (proxy.username) {
        const user = decodeURIComponent(proxy.username);
        const password = decodeURIComponent(proxy.password);
        lines.push(`Proxy-Authorization: Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`);
      }
      socket.write(`${lines.join("\r\n")}\r\n\r\n`);
    });
  });
}
