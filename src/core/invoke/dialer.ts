// The connections of one curl transport (transport.ts): dialing TCP, a Unix socket or a proxy tunnel,
// TLS with the flags buf has (--cacert, -k, --servername, --cert/--key; ALPN), TCP keepalive and
// --connect-timeout, the verbose lines of each step, and a failure worded as Go words it (a dial that
// timed out is deadline_exceeded, one reset while dialing canceled, the rest unavailable). Over TLS
// without a fixed HTTP version the first connection negotiates it by ALPN and is kept (the spare) for
// the first call. Also the HTTP/1.1 connection pool that dials through it.
import { readFileSync } from "node:fs";
import * as http from "node:http";
import * as net from "node:net";
import { isIP } from "node:net";
import { resolve as resolvePath } from "node:path";
import * as tls from "node:tls";
import { Code, ConnectError } from "@connectrpc/connect";
import { ProtocallError } from "../errors";
import { dialErrorMessage } from "./node-errors";
import { openTunnel } from "./proxy-tunnel";
import { logTls } from "./tls-log";
import type { TransportSettings } from "./transport";

export function joinHostPort(host: string, port: number): string {
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}

function stripPort(authority: string): string {
  if (authority.startsWith("[")) return authority.slice(1, authority.indexOf("]"));
  const i = authority.lastIndexOf(":");
  return i >= 0 ? authority.slice(0, i) : authority;
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

/** A connection the peer reset: ECONNRESET on a read, EPIPE on a write after the reset arrived. */
function isReset(err: NodeJS.ErrnoException): boolean {
  return err.code === "ECONNRESET" || err.code === "EPIPE";
}

export class Dialer {
  readonly url: URL;
  readonly secure: boolean;
  readonly hostname: string;
  readonly port: number;
  /** What Go names in a dial error: `tcp host:port` or `unix path`. */
  readonly target: string;
  /** The latest dial's failure, worded as buf words it. */
  failure: ConnectError | undefined;
  /**
   * A connection the server reset before sending a byte (a server that accepts and resets at once):
   * Go sees the reset while dialing, so buf reports it as a dial failure, `canceled`.
   */
  resetAtDial: ConnectError | undefined;
  /** `local->remote` of the latest connection, for a reset's message as Go words it. */
  addresses: string | undefined;
  /** The HTTP version: fixed by the settings, or once the first connection negotiated it (ALPN). */
  mode: "h1" | "h2" | undefined;
  /** A connection made and not used yet (the one that negotiated, or one dialed ahead of a call). */
  spare: net.Socket | undefined;
  private negotiation: Promise<void> | undefined;
  private readonly sockets = new Set<net.Socket>();
  private readonly verifyName: string;
  private readonly ca?: Buffer;
  private readonly cert?: Buffer;
  private readonly key?: Buffer;

  /** Reads the TLS files now, so a missing or mismatched one fails before anything is sent. */
  constructor(private readonly s: TransportSettings) {
    this.url = new URL(s.baseUrl);
    this.secure = this.url.protocol === "https:";
    const host = this.url.hostname;
    this.hostname = host.startsWith("[") ? host.slice(1, -1) : host;
    this.port = Number(this.url.port || (this.secure ? 443 : 80));
    this.ca = s.cacert ? readPem(s.cacert, "--cacert", s.cwd) : undefined;
    this.cert = s.cert ? readPem(s.cert, "--cert", s.cwd) : undefined;
    this.key = s.key ? readPem(s.key, "--key", s.cwd) : undefined;
    if (this.cert && this.key && s.cert && s.key) checkKeyPair(this.cert, this.key, s.cert, s.key);
    const authorityHost = s.authority ? stripPort(s.authority) : undefined;
    this.verifyName = s.servername || authorityHost || this.hostname;
    this.target = s.unixSocket ? `unix ${s.unixSocket}` : `tcp ${joinHostPort(this.hostname, this.port)}`;
    this.mode = s.mode === "alpn" ? undefined : s.mode;
  }

  /** The proxy connections tunnel through (none for a Unix socket). */
  get proxy() {
    return this.s.unixSocket ? undefined : this.s.proxy;
  }

  /** What ALPN offers for `protocol` over TLS (nothing over plain text). */
  alpn(protocol: "h2" | "http/1.1"): string[] | undefined {
    return this.secure ? [protocol] : undefined;
  }

  /**
   * Opens one connection (synchronously returns a connecting socket). `tunnel`: a proxy tunnel to the
   * server (proxy-tunnel.ts), already open, that TLS or HTTP runs over.
   */
  dial(alpn: string[] | undefined, tunnel?: net.Socket): net.Socket {
    const { s, secure, hostname, port, target, verifyName } = this;
    const log = s.log;
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
        ca: this.ca,
        cert: this.cert,
        key: this.key,
        rejectUnauthorized: !s.insecure,
        checkServerIdentity: (_host, peer) => tls.checkServerIdentity(verifyName, peer),
      });
    } else {
      socket = tunnel ?? net.connect(where);
    }
    this.sockets.add(socket);
    socket.once("close", () => this.sockets.delete(socket));
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
        this.resetAtDial = new ConnectError(
          `dial ${target}: connect: connection reset by peer`,
          Code.Canceled,
        );
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
      this.failure = new ConnectError(dialErrorMessage(err, target, hostname, verifyName), code);
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
          this.addresses = `${joinHostPort(socket.localAddress, socket.localPort ?? 0)}->${remote}`;
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
  async ready(alpn: string[] | undefined): Promise<net.Socket> {
    let tunnel: net.Socket | undefined;
    const proxy = this.proxy;
    if (proxy) {
      tunnel = await openTunnel({
        proxy: proxy.url,
        from: proxy.from,
        strictSSL: proxy.strictSSL,
        host: this.hostname,
        port: this.port,
        log: this.s.log,
        timeoutMs: this.s.connectTimeoutMs,
      });
    }
    const socket = this.dial(alpn, tunnel);
    if (tunnel && !this.secure) return socket;
    return new Promise((resolve, reject) => {
      const event = this.secure ? "secureConnect" : "connect";
      socket.once(event, () => {
        socket.off("error", reject);
        resolve(socket);
      });
      socket.once("error", (err) => reject(this.failure ?? err));
    });
  }

  /** Settles the HTTP version: at once when fixed, else by a first connection offering h2 and http/1.1. */
  negotiate(): Promise<void> {
    if (this.mode) return Promise.resolve();
    this.negotiation ??= this.ready(["h2", "http/1.1"]).then((socket) => {
      const proto = (socket as tls.TLSSocket).alpnProtocol;
      this.mode = proto === "h2" ? "h2" : "h1";
      this.spare = socket;
    });
    return this.negotiation;
  }

  /** The spare connection, unless it died while it waited. */
  takeSpare(): net.Socket | undefined {
    const sock = this.spare;
    this.spare = undefined;
    // A connection that died while it waited (a server's TLS alert after the handshake, an idle
    // close) is not handed on: HTTP/2 on a closed socket waits forever. The next one is dialed.
    return sock?.destroyed ? undefined : sock;
  }

  /** HTTP/1.1: a connection pool that dials with these settings and keeps connections for reuse. */
  http1Pool(): http.Agent {
    const pool = new http.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });
    (pool as unknown as { protocol: string }).protocol = this.url.protocol;
    (pool as unknown as { defaultPort: number }).defaultPort = this.secure ? 443 : 80;
    (pool as unknown as { createConnection: unknown }).createConnection = (
      _options: unknown,
      done: (err: Error | null, socket?: net.Socket) => void,
    ) => {
      const taken = this.takeSpare();
      if (taken || !this.proxy) return taken ?? this.dial(this.alpn("http/1.1"));
      // Through a proxy a connection is ready only once its tunnel is: handed over when it is.
      this.ready(this.alpn("http/1.1")).then(
        (socket) => done(null, socket),
        (err: Error) => done(err),
      );
      return undefined;
    };
    return pool;
  }

  /** Closes every connection it made. */
  close(): void {
    for (const sock of this.sockets) sock.destroy();
    this.spare?.destroy();
  }
}
