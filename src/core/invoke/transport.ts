// The HTTP side of `protocall curl`: Connect, gRPC and gRPC-Web transports from connect-node's
// protocol implementations, over our own connections so that we control what `buf curl` controls:
//  - http: HTTP/1.1, or h2c with prior knowledge (implied for gRPC and for reflection);
//  - https: ALPN offers h2, then http/1.1 (only h2 with --http2-prior-knowledge);
//  - TLS: --cacert replaces the system roots, -k, --servername (SNI and the verified name; default
//    the Host header, else the URL host), --cert/--key; --unix-socket for every connection;
//  - TCP keepalive, --connect-timeout for connection setup only; connection setup also ends with the
//    call's deadline or cancel (a server that accepts and goes silent holds no call past --timeout);
//  - verbose lines for connections, requests, responses and body bytes;
//  - request headers as buf sends them (request-headers.ts), single-message bodies (unary and
//    server-streaming calls) with a Content-Length, and the call's deadline, cancellation and error
//    texts in buf's words (call-context.ts).
// Connection failures become errors worded like buf's (node-errors.ts). Responses are bounded as buf
// bounds them (response-limits.ts) and long streams read through a fast path with back-pressure
// (response-envelopes.ts). A connection the server resets is `canceled`, one it closes before
// answering `unavailable` ("unexpected EOF"), a stream that ends inside a message `internal`, one
// whose connection closes cleanly under it by where it stopped (body-cut-short.ts), as in buf.
import { readFileSync } from "node:fs";
import * as http from "node:http";
import type * as http2 from "node:http2";
import * as net from "node:net";
import { isIP } from "node:net";
import { resolve as resolvePath } from "node:path";
import * as tls from "node:tls";
import { Code, ConnectError, type Interceptor, type Transport } from "@connectrpc/connect";
import type {
  CommonTransportOptions,
  UniversalClientFn,
  UniversalClientRequest,
  UniversalClientResponse,
} from "@connectrpc/connect/protocol";
import type { NodeHttpClientOptions } from "@connectrpc/connect-node";
import { ProtocallError } from "../errors";
import { coalesce } from "./batch";
import { withCallContext } from "./call-context";
import { endedMidBody, type StreamSlot, throwIfResetByServer, watchStream } from "./h2-stream-end";
import { createHttp1Client } from "./http1-client";
import {
  dialErrorMessage,
  type GoAway,
  goAwayError,
  hasCode,
  messageOf,
  notHttp2,
  tlsAlert,
} from "./node-errors";
import type { CurlOptions, Protocol } from "./options";
import type { ProxyChoice } from "./proxy-choice";
import { openTunnel } from "./proxy-tunnel";
import { type HeaderSplitter, splitNodeHeaders } from "./repeated-headers";
import { alignRequestHeaders } from "./request-headers";
import { EnvelopeScanner, type ResponseTap, tapMessages } from "./response-envelopes";
import { boundMessages, gzip, MAX_MESSAGE_BYTES } from "./response-limits";
import { logTls } from "./tls-log";
import { untilAborted } from "./until-aborted";
import { logHeaders, type VerboseLog } from "./verbose";

type NodeHttp2ClientSessionManager = ReturnType<
  NonNullable<Extract<NodeHttpClientOptions, { httpVersion: "2" }>["sessionProvider"]>
>;

export type HttpMode = "h1" | "h2" | "alpn";

export interface TransportSettings {
  /** Base URL (scheme, host, port, path prefix), without a trailing slash. */
  baseUrl: string;
  protocol: Protocol;
  /** h1: HTTP/1.1; h2: HTTP/2 (h2c over http, ALPN h2 only over https); alpn: h2 or http/1.1. */
  mode: HttpMode;
  /** From a Host header: the HTTP authority and the default TLS server name. */
  authority?: string;
  unixSocket?: string;
  /** The HTTP proxy every connection tunnels through (proxy-choice.ts); undefined = direct. */
  proxy?: ProxyChoice;
  /** Milliseconds to establish a connection (TCP and TLS); undefined = no limit. */
  connectTimeoutMs?: number;
  /** TCP keepalive interval in milliseconds; undefined = keepalive off. */
  keepaliveMs?: number;
  cacert?: string;
  cert?: string;
  key?: string;
  insecure?: boolean;
  servername?: string;
  /** Resolves relative TLS file paths. */
  cwd?: string;
  log: VerboseLog;
  /** Sends the values of a repeated header name as separate fields (see repeated-headers.ts). */
  splitHeader?: HeaderSplitter;
}

export type { ResponseTap } from "./response-envelopes";

export interface CurlTransport {
  readonly transport: Transport;
  /**
   * Routes the response messages of calls whose path ends with `pathSuffix` (`/pkg.Service/Method`)
   * to `tap`; undefined removes it. Only for methods whose responses are streamed.
   */
  tapResponses(pathSuffix: string, tap: ResponseTap | undefined): void;
  /**
   * Sends `body` (request messages already in envelopes, uncompressed) as the request body of calls
   * whose path ends with `pathSuffix`, instead of what the transport serializes: the fast path for
   * long request streams. The transport is then given no messages of its own.
   */
  tapRequests(pathSuffix: string, body: AsyncIterable<Uint8Array> | undefined): void;
  /** The HTTP version in use once the first connection is made: "1.1" or "2". */
  httpVersion(): "1.1" | "2" | undefined;
  /** Closes all connections. */
  close(): void;
}

/** A connection the peer reset: ECONNRESET on a read, EPIPE on a write after the reset arrived. */
function isReset(err: NodeJS.ErrnoException): boolean {
  return err.code === "ECONNRESET" || err.code === "EPIPE";
}

/** The connection settings that a curl command's options give (without the log and header splitter). */
export function curlTransportSettings(
  o: CurlOptions,
  target: { baseUrl: string; mode: HttpMode; authority?: string; cwd?: string; proxy?: ProxyChoice },
): Omit<TransportSettings, "log" | "splitHeader"> {
  return {
    baseUrl: target.baseUrl,
    protocol: o.protocol,
    mode: target.mode,
    authority: target.authority,
    unixSocket: o.unixSocket,
    proxy: target.proxy,
    connectTimeoutMs: o.connectTimeout !== undefined ? o.connectTimeout * 1000 : undefined,
    keepaliveMs: o.noKeepalive ? undefined : (o.keepaliveTime ?? 60) * 1000,
    cacert: o.cacert,
    cert: o.cert,
    key: o.key,
    insecure: o.insecure,
    servername: o.servername,
    cwd: target.cwd,
  };
}

/**
 * Chooses HTTP/1.1, HTTP/2 or negotiation. Returns a note for verbose output when HTTP/2 prior
 * knowledge is implied (gRPC or reflection over plain http need HTTP/2).
 */
export function chooseHttpMode(
  o: CurlOptions,
  secure: boolean,
  reflection: boolean,
): { mode: HttpMode; note?: string } {
  if (o.http2PriorKnowledge) return { mode: "h2" };
  if (secure) return { mode: "alpn" };
  if (o.protocol === "grpc" || reflection) {
    const why = o.protocol === "grpc" ? "the gRPC protocol needs HTTP/2" : "server reflection needs HTTP/2";
    return { mode: "h2", note: `Using HTTP/2 prior knowledge over plain-text (h2c): ${why}` };
  }
  return { mode: "h1" };
}

function readPem(path: string, flag: string, cwd: string | undefined): Buffer {
  let data: Buffer;
  try {
    data = readFileSync(cwd ? resolvePath(cwd, path) : path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ProtocallError(
      `${flag} ${path}: cannot read the file (${code === "ENOENT" ? "no such file" : (err as Error).message}); give the path of a PEM file`,
    );
  }
  if (!data.includes("-----BEGIN ")) {
    throw new ProtocallError(
      `${flag} ${path}: no PEM data in the file; give a PEM file (text starting with "-----BEGIN ")`,
    );
  }
  return data;
}

/** Checks a client certificate and key before anything is sent, as Go's tls.LoadX509KeyPair does. */
function checkKeyPair(cert: Buffer, key: Buffer, certPath: string, keyPath: string): void {
  try {
    tls.createSecureContext({ cert, key });
  } catch (err) {
    const why = (err as Error).message.replace(/^error:[0-9A-F]+:[^:]*::?/, "");
    throw new ProtocallError(
      `--cert ${certPath} and --key ${keyPath} are not a usable certificate and private key (${why}); give the client certificate and its own private key, both in PEM`,
    );
  }
}

/** Creates the transport. TLS files are read now, so a missing file fails before anything is sent. */
export async function createCurlTransport(s: TransportSettings): Promise<CurlTransport> {
  const url = new URL(s.baseUrl);
  const secure = url.protocol === "https:";
  const hostname = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  const port = Number(url.port || (secure ? 443 : 80));
  const log = s.log;
  const ca = s.cacert ? readPem(s.cacert, "--cacert", s.cwd) : undefined;
  const cert = s.cert ? readPem(s.cert, "--cert", s.cwd) : undefined;
  const key = s.key ? readPem(s.key, "--key", s.cwd) : undefined;
  if (cert && key && s.cert && s.key) checkKeyPair(cert, key, s.cert, s.key);
  const authorityHost = s.authority ? stripPort(s.authority) : undefined;
  const verifyName = s.servername || authorityHost || hostname;
  const target = s.unixSocket ? `unix ${s.unixSocket}` : `tcp ${joinHostPort(hostname, port)}`;

  let dialFailure: ConnectError | undefined;
  /**
   * A connection the server reset before sending a byte (a server that accepts and resets at once):
   * Go sees the reset while dialing, so buf reports it as a dial failure, `canceled`.
   */
  let resetAtDial: ConnectError | undefined;
  let tap: { suffix: string; tap: ResponseTap } | undefined;
  let requestTap: { suffix: string; body: AsyncIterable<Uint8Array> } | undefined;
  const sockets = new Set<net.Socket>();
  /** `local->remote` of the latest connection, for a reset's message as Go words it. */
  let addresses: string | undefined;

  const proxy = s.unixSocket ? undefined : s.proxy;

  /**
   * Opens one connection (synchronously returns a connecting socket). `tunnel`: a proxy tunnel to the
   * server (proxy-tunnel.ts), already open, that TLS or HTTP runs over.
   */
  function dial(alpn: string[] | undefined, tunnel?: net.Socket): net.Socket {
    if (!tunnel)
      log.info(
        s.unixSocket
          ? `Dialing (unix) ${s.unixSocket}...`
          : `Dialing (tcp) ${joinHostPort(hostname, port)}...`,
      );
    const where = s.unixSocket ? { path: s.unixSocket } : { host: hostname, port };
    let socket: net.Socket;
    if (secure) {
      socket = tls.connect({
        ...(tunnel ? { socket: tunnel } : where),
        servername: isIP(verifyName) ? undefined : verifyName,
        ALPNProtocols: alpn,
        ca,
        cert,
        key,
        rejectUnauthorized: !s.insecure,
        checkServerIdentity: (_host, peer) => tls.checkServerIdentity(verifyName, peer),
      });
    } else {
      socket = tunnel ?? net.connect(where);
    }
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    if (s.keepaliveMs !== undefined) socket.setKeepAlive(true, s.keepaliveMs);
    else socket.setKeepAlive(false);
    socket.setNoDelay(true);
    let established = false;
    let tcpConnected = false;
    let timer: NodeJS.Timeout | undefined;
    if (s.connectTimeoutMs !== undefined) {
      timer = setTimeout(() => {
        // Not connected: Go's dialer times out (deadline_exceeded, as buf). Connected, with a TLS
        // handshake that never finishes (buf waits for it without limit): unavailable.
        const err = Object.assign(new Error(`dial ${target}: i/o timeout`), {
          code: tcpConnected ? "EHANDSHAKETIMEDOUT" : "ETIMEDOUT",
        });
        socket.destroy(err);
      }, s.connectTimeoutMs);
    }
    socket.on("error", (err: NodeJS.ErrnoException) => {
      if (timer) clearTimeout(timer);
      // A reset before any answer: ECONNRESET, or EPIPE when it beat our first write (timing alone).
      if (established && isReset(err) && socket.bytesRead === 0 && !secure) {
        resetAtDial = new ConnectError(`dial ${target}: connect: connection reset by peer`, Code.Canceled);
      }
      if (established) {
        // After the handshake Node reports a TLS error (a TLS 1.3 server's alert for a missing client
        // certificate) without destroying the socket. Destroyed, a connection that dies while it waits
        // to be used is seen as dead (takeSpare) instead of being handed to HTTP/2, which would send
        // the call on it and wait forever. Whoever uses the socket gets this error as well.
        socket.destroy();
        return;
      }
      // A dial that timed out is deadline_exceeded, as connect-go reports a net.Error that is a timeout.
      // A reset while dialing is `canceled`, as connect-go reports a reset connection.
      const code =
        err.code === "ETIMEDOUT"
          ? Code.DeadlineExceeded
          : err.code === "ECONNRESET"
            ? Code.Canceled
            : Code.Unavailable;
      dialFailure = new ConnectError(dialErrorMessage(err, target, hostname, verifyName), code);
    });
    const onConnected = () => {
      if (timer) clearTimeout(timer);
      established = true;
    };
    const connected = () => {
      tcpConnected = true;
      if (tunnel) log.info(`Connected to ${joinHostPort(hostname, port)} through the proxy`);
      else if (socket.remoteAddress) {
        const remote = joinHostPort(socket.remoteAddress, socket.remotePort ?? port);
        if (socket.localAddress)
          addresses = `${joinHostPort(socket.localAddress, socket.localPort ?? 0)}->${remote}`;
        log.info(`Connected to ${remote}`);
      } else log.info(`Connected to ${s.unixSocket ?? target}`);
      if (secure && alpn) log.info(`ALPN: offering ${alpn.join(",")}`);
      if (!secure) onConnected();
    };
    if (tunnel) connected();
    else socket.once("connect", connected);
    if (secure) {
      socket.once("secureConnect", () => {
        onConnected();
        if (log.enabled) logTls(log, socket as tls.TLSSocket, !!s.insecure, verifyName);
      });
    }
    return socket;
  }

  /** Dials (through the proxy, if any) and waits until the connection (and TLS handshake) is up. */
  async function dialReady(alpn: string[] | undefined): Promise<net.Socket> {
    let tunnel: net.Socket | undefined;
    if (proxy) {
      tunnel = await openTunnel({
        proxy: proxy.url,
        from: proxy.from,
        strictSSL: proxy.strictSSL,
        host: hostname,
        port,
        log,
        timeoutMs: s.connectTimeoutMs,
      });
    }
    const socket = dial(alpn, tunnel);
    if (tunnel && !secure) return socket;
    return new Promise((resolve, reject) => {
      const event = secure ? "secureConnect" : "connect";
      socket.once(event, () => {
        socket.off("error", reject);
        resolve(socket);
      });
      socket.once("error", (err) => reject(dialFailure ?? err));
    });
  }

  let mode: "h1" | "h2" | undefined = s.mode === "alpn" ? undefined : s.mode;
  let spare: net.Socket | undefined;
  let firstRequest = true;
  let negotiation: Promise<void> | undefined;
  const negotiate = (): Promise<void> => {
    if (mode) return Promise.resolve();
    negotiation ??= dialReady(["h2", "http/1.1"]).then((socket) => {
      const proto = (socket as tls.TLSSocket).alpnProtocol;
      mode = proto === "h2" ? "h2" : "h1";
      spare = socket;
    });
    return negotiation;
  };
  const takeSpare = () => {
    const sock = spare;
    spare = undefined;
    // A connection that died while it waited (a server's TLS alert after the handshake, an idle
    // close) is not handed on: HTTP/2 on a closed socket waits forever. The next one is dialed.
    return sock?.destroyed ? undefined : sock;
  };

  // HTTP/1.1: a connection pool that dials with our settings and keeps connections for reuse.
  const pool = new http.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });
  (pool as unknown as { protocol: string }).protocol = url.protocol;
  (pool as unknown as { defaultPort: number }).defaultPort = secure ? 443 : 80;
  (pool as unknown as { createConnection: unknown }).createConnection = (
    _options: unknown,
    done: (err: Error | null, socket?: net.Socket) => void,
  ) => {
    const taken = takeSpare();
    if (taken || !proxy) return taken ?? dial(secure ? ["http/1.1"] : undefined);
    // Through a proxy a connection is ready only once its tunnel is: handed over when it is.
    dialReady(secure ? ["http/1.1"] : undefined).then(
      (socket) => done(null, socket),
      (err: Error) => done(err),
    );
    return undefined;
  };
  const h1Client = createHttp1Client({ pool, host: s.authority, splitHeader: s.splitHeader });

  // HTTP/2: one session, created on first use; :authority follows a Host header. Windows are
  // large (as Go's HTTP/2 client has them), so a fast server stream is not throttled to one 64 KiB
  // window per round trip while responses are printed.
  let session: http2.ClientHttp2Session | undefined;
  let sessionReady: Promise<http2.ClientHttp2Session> | undefined;
  const openStreams = new Map<http2.ClientHttp2Session, Set<http2.ClientHttp2Stream>>();
  /** The GOAWAY each session received, to say so when a call fails because of it. */
  const goaways = new WeakMap<http2.ClientHttp2Session, GoAway>();
  const openSession = (): Promise<http2.ClientHttp2Session> => {
    if (sessionReady && session && !session.closed && !session.destroyed) return sessionReady;
    sessionReady = Promise.resolve(loadHttp2()).then(async (http2) => {
      // Through a proxy the connection is dialed (tunnel and TLS) before the session takes it.
      if (proxy && !spare) spare = await dialReady(secure ? ["h2"] : undefined);
      return await (new Promise((resolve, reject) => {
        const sess = http2.connect(url.origin, {
          createConnection: () => takeSpare() ?? dial(secure ? ["h2"] : undefined),
          settings: { initialWindowSize: STREAM_WINDOW, enablePush: false },
        });
        session = sess;
        sess.on("goaway", (code: number, lastStreamID: number, debug?: Buffer) => {
          goaways.set(sess, { code, lastStreamID, debug: debug?.toString("latin1") ?? "" });
        });
        const onError = (err: Error) => reject(dialFailure ?? err);
        sess.once("error", onError);
        sess.once("connect", () => {
          sess.off("error", onError);
          if (sess.socket?.destroyed) {
            sess.destroy();
            reject(
              dialFailure ??
                new ConnectError("the connection was closed before it was ready", Code.Unavailable),
            );
            return;
          }
          // A failure after the handshake (a TLS alert, a reset) ends every open stream of this
          // session with it, so no call waits on a dead connection.
          const failStreams = (err: Error) => {
            const streams = openStreams.get(sess);
            if (!streams) return;
            openStreams.delete(sess);
            for (const st of streams) if (!st.destroyed) st.destroy(err);
          };
          sess.on("error", failStreams);
          sess.once("close", () =>
            failStreams(new ConnectError("the connection was closed", Code.Unavailable)),
          );
          try {
            sess.setLocalWindowSize(CONNECTION_WINDOW);
          } catch {
            // keep the default window
          }
          resolve(sess);
        });
      }) as Promise<http2.ClientHttp2Session>);
    });
    return sessionReady;
  };
  /** Opens a call's stream and puts it in `slot`, so that the call can tell how the server ended it. */
  const sessionManagerFor = (slot: StreamSlot): NodeHttp2ClientSessionManager => ({
    authority: url.origin,
    async request(method, path, headers, options) {
      const sess = await openSession();
      const h: http2.OutgoingHttpHeaders = { ...headers, ":method": method, ":path": path };
      if (s.authority) h[":authority"] = s.authority;
      splitNodeHeaders(h, s.splitHeader);
      const stream = sess.request(h, options);
      watchStream(slot, stream, sess);
      let streams = openStreams.get(sess);
      if (!streams) openStreams.set(sess, (streams = new Set()));
      streams.add(stream);
      stream.once("close", () => streams.delete(stream));
      return stream;
    },
    notifyResponseByteRead() {},
  });
  // connect-node's HTTP/2 client, loaded only when HTTP/2 is used; one per call (a closure).
  let h2ClientFor: ((slot: StreamSlot) => UniversalClientFn) | undefined;
  const loadH2Client = async (): Promise<(slot: StreamSlot) => UniversalClientFn> => {
    if (!h2ClientFor) {
      const { createNodeHttpClient } = await import("@connectrpc/connect-node");
      h2ClientFor = (slot) =>
        createNodeHttpClient({ httpVersion: "2", sessionProvider: () => sessionManagerFor(slot) });
    }
    return h2ClientFor;
  };

  // Requests whose body is one message known in advance (unary and server-streaming calls) go out with
  // a Content-Length, as buf sends them, instead of an open-ended (chunked) body. The interceptor sees
  // the method and marks the call's Headers object, which the HTTP client receives.
  const sized = new WeakSet<Headers>();
  const markSized: Interceptor = (next) => (req) => {
    const kind = req.method.methodKind;
    if (kind === "unary" || kind === "server_streaming") sized.add(req.header);
    return next(req);
  };

  const httpClient: UniversalClientFn = async (req) => {
    // Dialing, the TLS handshake and the HTTP/2 preface end with the call's deadline or cancel: a
    // server that accepts and goes silent must not hold a call past its --timeout.
    try {
      await untilAborted(negotiate(), req.signal);
    } catch (err) {
      throw setupFailure(err, req.signal);
    }
    // gRPC over HTTP/1.1 (a server that negotiated http/1.1) works with servers that send trailers
    // in a chunked body, as buf's client does; others fail with their own error.
    const slot: StreamSlot = {};
    const inner = mode === "h2" ? (await loadH2Client())(slot) : h1Client;
    // Connect before the request is logged, so verbose output reads in order (as buf's does).
    try {
      if (mode === "h2") await untilAborted(openSession(), req.signal);
      else if (firstRequest && !spare)
        spare = await untilAborted(dialReady(secure ? ["http/1.1"] : undefined), req.signal);
    } catch (err) {
      throw setupFailure(err, req.signal);
    }
    firstRequest = false;
    alignRequestHeaders(s.protocol, req.header);
    const path = new URL(req.url).pathname;
    const encoded = requestTap && path.endsWith(requestTap.suffix) ? requestTap.body : undefined;
    let body = encoded ?? (req.body ? coalesce(req.body) : undefined);
    let send = inner;
    if (!encoded && req.body && sized.has(req.header)) {
      const bytes = await readAll(req.body);
      body = once(bytes);
      // Not in verbose output: buf's transcript leaves Content-Length out too.
      // An empty message goes without one, as buf sends it.
      if (bytes.byteLength > 0) {
        send = (r) => {
          const header = new Headers(r.header);
          header.set("content-length", String(bytes.byteLength));
          return inner({ ...r, header });
        };
      }
    }
    let res: UniversalClientResponse;
    try {
      res = await observe(
        send,
        { ...req, body },
        log,
        mode === "h2" ? "2.0" : "1.1",
        () => dialFailure,
        s.splitHeader,
      );
    } catch (err) {
      const goaway = mode === "h2" && session ? goaways.get(session) : undefined;
      if (goaway && !req.signal?.aborted) throw goAwayError(goaway);
      throwIfResetByServer(slot, req.signal);
      throw peerEnded(mode === "h2" ? notHttp2(err) : err, req.signal, true);
    }
    if (slot.session) res = { ...res, body: endedMidBody(res, slot, req.signal, goaways) };
    res = { ...res, body: mapBodyErrors(boundMessages(res), req.signal) };
    if (tap && path.endsWith(tap.suffix)) return tapMessages(res, tap.tap);
    return res;
  };

  const options: CommonTransportOptions = {
    httpClient,
    baseUrl: s.baseUrl,
    useBinaryFormat: true,
    interceptors: [markSized],
    acceptCompression: [gzip],
    sendCompression: null,
    compressMinBytes: 1024,
    readMaxBytes: MAX_MESSAGE_BYTES,
    writeMaxBytes: 0xffffffff,
  };
  let transport: Transport;
  switch (s.protocol) {
    case "grpc":
      transport = (await import("@connectrpc/connect/protocol-grpc")).createTransport(options);
      break;
    case "grpcweb":
      transport = (await import("@connectrpc/connect/protocol-grpc-web")).createTransport(options);
      break;
    default:
      transport = (await import("@connectrpc/connect/protocol-connect")).createTransport(options);
  }

  /**
   * How a connection the server ended reaches the call, as buf reports it: a reset (RST) is
   * `canceled` (Go's `read tcp a->b: read: connection reset by peer`), a connection closed before the
   * response `unavailable` (`unexpected EOF`), a TLS alert `unavailable`; our own abort stays what it
   * is. (Stream resets and clean closes under a body are worded before: h2-stream-end.ts.)
   */
  const peerEnded = (err: unknown, signal: AbortSignal | undefined, beforeResponse = false): unknown => {
    if (signal?.aborted) return err;
    const alert = tlsAlert(err);
    if (alert) return alert;
    if (beforeResponse && resetAtDial) return resetAtDial;
    if (hasCode(err, "ECONNRESET") && !/socket hang up/.test(messageOf(err))) {
      return new ConnectError(
        `read ${addresses ? `tcp ${addresses}` : target}: read: connection reset by peer`,
        Code.Canceled,
      );
    }
    const hangUp = /socket hang up/.test(messageOf(err));
    if (!hangUp && err instanceof ConnectError && err.code === Code.Unavailable) return err;
    const sessionGone = mode === "h2" && (!session || session.closed || session.destroyed);
    if (beforeResponse && (hangUp || sessionGone)) {
      return new ConnectError("unexpected EOF", Code.Unavailable);
    }
    return err;
  };
  async function* mapBodyErrors(
    src: AsyncIterable<Uint8Array>,
    signal: AbortSignal | undefined,
  ): AsyncIterable<Uint8Array> {
    try {
      yield* src;
    } catch (err) {
      throw peerEnded(err, signal);
    }
  }

  /** A failure while connecting: the abort's own reason, else the dial failure, as `unavailable`. */
  const setupFailure = (err: unknown, signal: AbortSignal | undefined): unknown =>
    signal?.aborted
      ? (signal.reason ?? err)
      : (dialFailure ?? tlsAlert(err) ?? ConnectError.from(err, Code.Unavailable));

  return {
    transport: withCallContext(transport, s.protocol),
    httpVersion: () => (mode === "h2" ? "2" : mode === "h1" ? "1.1" : undefined),
    tapResponses(pathSuffix, fn) {
      tap = fn ? { suffix: pathSuffix, tap: fn } : undefined;
    },
    tapRequests(pathSuffix, body) {
      requestTap = body ? { suffix: pathSuffix, body } : undefined;
    },
    close() {
      pool.destroy();
      // A stream still open ends with an error: destroying its session alone closes it without one,
      // and the call would wait for a response that cannot come.
      const closed = new ConnectError("the connection was closed", Code.Unavailable);
      for (const streams of openStreams.values())
        for (const st of streams) if (!st.destroyed) st.destroy(closed);
      openStreams.clear();
      session?.destroy();
      for (const sock of sockets) sock.destroy();
      spare?.destroy();
    },
  };
}

async function readAll(body: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  for await (const chunk of body) parts.push(chunk);
  return parts.length === 1 ? parts[0] : Buffer.concat(parts);
}

async function* once(bytes: Uint8Array): AsyncIterable<Uint8Array> {
  yield bytes;
}

/** Wraps one request: verbose lines, batched request body, dial errors as `unavailable`. */
async function observe(
  inner: UniversalClientFn,
  req: UniversalClientRequest,
  log: VerboseLog,
  version: string,
  dialFailure: () => ConnectError | undefined,
  splitHeader?: HeaderSplitter,
): Promise<UniversalClientResponse> {
  const n = log.nextRequest();
  let body = req.body;
  if (log.enabled) {
    const u = new URL(req.url);
    log.line(`> (#${n}) ${req.method} ${u.pathname}${u.search}`);
    logHeaders(log, ">", n, req.header, false, splitHeader);
    log.line(`> (#${n})`);
    if (body)
      body = countBytes(
        body,
        (k) => log.line(`} (#${n}) [${k} bytes data]`),
        () => log.info(`(#${n}) Finished upload`),
      );
  }
  let res: UniversalClientResponse;
  try {
    res = await inner({ ...req, body });
  } catch (err) {
    throw dialFailure() ?? err;
  }
  if (!log.enabled) return res;
  log.line(`< (#${n}) HTTP/${version} ${res.status} ${http.STATUS_CODES[res.status] ?? ""}`.trimEnd());
  // Transfer-Encoding belongs to the HTTP/1.1 framing, which Go's client hides too.
  const shown = new Headers(res.header);
  shown.delete("transfer-encoding");
  logHeaders(log, "<", n, shown);
  log.line(`< (#${n})`);
  const trailer = res.trailer;
  const contentType = res.header.get("content-type") ?? "";
  const scanner = contentType.startsWith("application/grpc-web")
    ? new EnvelopeScanner(0x80)
    : contentType.startsWith("application/connect+")
      ? new EnvelopeScanner(0x02)
      : undefined;
  const responseBody = countBytes(
    res.body,
    (k, chunk) => {
      log.line(`{ (#${n}) [${k} bytes data]`);
      scanner?.push(chunk);
    },
    () => {
      let any = false;
      trailer.forEach(() => {
        any = true;
      });
      if (any) {
        log.line(`< (#${n})`);
        logHeaders(log, "<", n, trailer);
      }
      log.info(`(#${n}) Call complete`);
      const bodyTrailers = scanner?.trailers(contentType.startsWith("application/grpc-web"));
      if (bodyTrailers) {
        log.line(`< (#${n})`);
        logHeaders(log, "<", n, bodyTrailers, true);
      }
    },
  );
  return { ...res, body: responseBody };
}

/** Passes chunks through, reporting each non-empty chunk and the end. */
async function* countBytes(
  src: AsyncIterable<Uint8Array>,
  onChunk: (bytes: number, chunk: Uint8Array) => void,
  onEnd: () => void,
): AsyncIterable<Uint8Array> {
  for await (const chunk of src) {
    if (chunk.byteLength > 0) onChunk(chunk.byteLength, chunk);
    yield chunk;
  }
  onEnd();
}

// Node built-ins that only some calls need, loaded on first use with require() (a dynamic import()
// would start Node's ES module loader, which costs more than the module itself).
function loadHttp2(): typeof import("node:http2") {
  return require("node:http2");
}
const STREAM_WINDOW = 4 << 20;
const CONNECTION_WINDOW = 16 << 20;

function joinHostPort(host: string, port: number): string {
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}

function stripPort(authority: string): string {
  if (authority.startsWith("[")) return authority.slice(1, authority.indexOf("]"));
  const i = authority.lastIndexOf(":");
  return i >= 0 ? authority.slice(0, i) : authority;
}
