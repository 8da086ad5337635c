// The redirect of the authorization code grant, taken on a loopback port (RFC 8252, "loopback
// interface redirection"): a one-shot HTTP server on 127.0.0.1 that answers the browser with a short
// page and hands the full redirect URL (code, state, or the provider's error) to the token exchange.
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { ProtocallError } from "../errors";

export interface LoopbackRedirect {
  /** The redirect_uri to register and send: `http://127.0.0.1:PORT/callback`. */
  uri: string;
  /** The URL the browser was sent back to. */
  received: Promise<URL>;
  close(): void;
}

/** Longest wait for the person to sign in. */
const WAIT_MS = 5 * 60_000;

export async function receiveRedirect(o: { port?: number; signal?: AbortSignal }): Promise<LoopbackRedirect> {
  let done!: (url: URL) => void;
  let fail!: (err: Error) => void;
  const received = new Promise<URL>((resolve, reject) => {
    done = resolve;
    fail = reject;
  });
  received.catch(() => {});
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    if (url.pathname !== "/callback") {
      res.writeHead(404).end();
      return;
    }
    const error = url.searchParams.get("error");
    res.writeHead(200, { "content-type": "text/html; charset=utf-8", connection: "close" });
    res.end(
      `<!doctype html><title>Protocall</title><p>${error ? "Sign-in failed; see Protocall for the reason." : "Signed in. You can close this tab and return to Protocall."}</p>`,
    );
    done(url);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", (err: NodeJS.ErrnoException) =>
      reject(
        new ProtocallError(
          `cannot take the sign-in redirect on 127.0.0.1:${o.port ?? 0}: ${err.code ?? err.message}; choose another redirect-port=`,
        ),
      ),
    );
    server.listen(o.port ?? 0, "127.0.0.1", () => resolve());
  });
  const timer = setTimeout(
    () => fail(new ProtocallError(`no sign-in within ${WAIT_MS / 60_000} minutes; run again to retry`)),
    WAIT_MS,
  );
  timer.unref();
  const onAbort = () => fail(new ProtocallError("sign-in canceled"));
  o.signal?.addEventListener("abort", onAbort, { once: true });
  const port = (server.address() as AddressInfo).port;
  return {
    uri: `http://127.0.0.1:${port}/callback`,
    received,
    close() {
      clearTimeout(timer);
      o.signal?.removeEventListener("abort", onAbort);
      server.close();
      server.closeAllConnections();
    },
  };
}
