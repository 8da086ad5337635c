// The HTTP/2 side of one curl transport (transport.ts): one session, opened on first use over the
// dialer's connection (its spare, or a new one; through a proxy, dialed before the session takes it)
// and opened again once it closed. Windows are large (as Go's HTTP/2 client has them), so a fast server
// stream is not throttled to one 64 KiB window per round trip while responses are printed. Each call's
// stream is watched (h2-stream-end.ts) and kept with its session: a failure after the handshake (a TLS
// alert, a reset) ends every open stream of the session with it, so no call waits on a dead
// connection. The GOAWAY a session received is kept, to say so when a call fails because of it.
import type * as http2 from "node:http2";
import { Code, ConnectError } from "@connectrpc/connect";
import type { NodeHttpClientOptions } from "@connectrpc/connect-node";
import type { Dialer } from "./dialer";
import { type StreamSlot, watchStream } from "./h2-stream-end";
import type { GoAway } from "./node-errors";
import { splitNodeHeaders } from "./repeated-headers";
import type { TransportSettings } from "./transport";

export type NodeHttp2ClientSessionManager = ReturnType<
  NonNullable<Extract<NodeHttpClientOptions, { httpVersion: "2" }>["sessionProvider"]>
>;

// Loaded on first use with require() (a dynamic import() would start Node's ES module loader, which
// costs more than the module itself).
function loadHttp2(): typeof import("node:http2") {
  return require("node:http2");
}
const STREAM_WINDOW = 4 << 20;
const CONNECTION_WINDOW = 16 << 20;

export class H2Sessions {
  /** The latest session (open, or closed since). */
  session: http2.ClientHttp2Session | undefined;
  /** The GOAWAY each session received. */
  readonly goaways = new WeakMap<http2.ClientHttp2Session, GoAway>();
  private ready: Promise<http2.ClientHttp2Session> | undefined;
  private readonly openStreams = new Map<http2.ClientHttp2Session, Set<http2.ClientHttp2Stream>>();

  constructor(
    private readonly dialer: Dialer,
    private readonly s: TransportSettings,
  ) {}

  /** Whether there is no usable session (none yet, or it closed). */
  gone(): boolean {
    return !this.session || this.session.closed || this.session.destroyed;
  }

  /** The open session, or a new one once it is connected. */
  open(): Promise<http2.ClientHttp2Session> {
    if (this.ready && !this.gone()) return this.ready;
    const dialer = this.dialer;
    this.ready = Promise.resolve(loadHttp2()).then(async (http2) => {
      // Through a proxy the connection is dialed (tunnel and TLS) before the session takes it.
      if (dialer.proxy && !dialer.spare) dialer.spare = await dialer.ready(dialer.alpn("h2"));
      return await (new Promise((resolve, reject) => {
        const sess = http2.connect(dialer.url.origin, {
          createConnection: () => dialer.takeSpare() ?? dialer.dial(dialer.alpn("h2")),
          settings: { initialWindowSize: STREAM_WINDOW, enablePush: false },
        });
        this.session = sess;
        sess.on("goaway", (code: number, lastStreamID: number, debug?: Buffer) => {
          this.goaways.set(sess, { code, lastStreamID, debug: debug?.toString("latin1") ?? "" });
        });
        const onError = (err: Error) => reject(dialer.failure ?? err);
        sess.once("error", onError);
        sess.once("connect", () => {
          sess.off("error", onError);
          if (sess.socket?.destroyed) {
            sess.destroy();
            reject(
              dialer.failure ??
                new ConnectError("the connection was closed before it was ready", Code.Unavailable),
            );
            return;
          }
          const failStreams = (err: Error) => {
            const streams = this.openStreams.get(sess);
            if (!streams) return;
            this.openStreams.delete(sess);
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
    return this.ready;
  }

  /** Opens a call's stream and puts it in `slot`, so that the call can tell how the server ended it. */
  managerFor(slot: StreamSlot): NodeHttp2ClientSessionManager {
    const s = this.s;
    return {
      authority: this.dialer.url.origin,
      request: async (method, path, headers, options) => {
        const sess = await this.open();
        const h: http2.OutgoingHttpHeaders = { ...headers, ":method": method, ":path": path };
        if (s.authority) h[":authority"] = s.authority;
        splitNodeHeaders(h, s.splitHeader);
        const stream = sess.request(h, options);
        watchStream(slot, stream, sess);
        let streams = this.openStreams.get(sess);
        if (!streams) this.openStreams.set(sess, (streams = new Set()));
        streams.add(stream);
        stream.once("close", () => streams.delete(stream));
        return stream;
      },
      notifyResponseByteRead() {},
    };
  }

  /** The GOAWAY the latest session received, if any. */
  goaway(): GoAway | undefined {
    return this.session ? this.goaways.get(this.session) : undefined;
  }

  /**
   * Ends every stream still open with an error (destroying its session alone closes it without one,
   * and the call would wait for a response that cannot come), then the session.
   */
  close(): void {
    const closed = new ConnectError("the connection was closed", Code.Unavailable);
    for (const streams of this.openStreams.values())
      for (const st of streams) if (!st.destroyed) st.destroy(closed);
    this.openStreams.clear();
    this.session?.destroy();
  }
}
