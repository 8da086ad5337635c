// A Node HTTP(S) agent whose connections tunnel through a proxy (proxy-tunnel.ts), for the clients
// that use Node's `http`/`https` request API rather than our call transport: registry calls (the
// Connect transport of registry/transport.ts) and the webhook posts of http-post.ts (the registry's
// JSON API, listener forwards, replays). TLS to the server runs end to end over the tunnel.
import * as http from "node:http";
import * as https from "node:https";
import * as net from "node:net";
import * as tls from "node:tls";
import type { ProxyChoice } from "./proxy-choice";
import { openTunnel } from "./proxy-tunnel";
import { createVerboseLog } from "./verbose";

type Done = (err: Error | null, socket?: net.Socket) => void;

/**
 * An agent for `target`'s scheme whose every connection goes through `proxy`. `tlsOptions` (the
 * trusted CAs, `rejectUnauthorized`) apply to the server's TLS, as without a proxy.
 */
export function proxiedAgent(
  target: URL,
  proxy: ProxyChoice,
  tlsOptions: https.AgentOptions = {},
  agentOptions: http.AgentOptions = { keepAlive: true, maxSockets: 64 },
): http.Agent {
  const secure = target.protocol === "https:";
  const agent = secure ? new https.Agent({ ...agentOptions, ...tlsOptions }) : new http.Agent(agentOptions);
  const quiet = createVerboseLog(false, () => {});
  (agent as unknown as { createConnection: unknown }).createConnection = (
    options: tls.ConnectionOptions & { host?: string; port?: number | string },
    done: Done,
  ) => {
    const host = (options.host ?? target.hostname).replace(/^\[|\]$/g, "");
    const port = Number(options.port || target.port || (secure ? 443 : 80));
    openTunnel({
      proxy: proxy.url,
      from: proxy.from,
      strictSSL: proxy.strictSSL,
      host,
      port,
      log: quiet,
    }).then(
      (socket) => {
        if (!secure) {
          done(null, socket);
          return;
        }
        const servername = options.servername ?? (net.isIP(host) ? undefined : host);
        done(null, tls.connect({ ...options, socket, servername }));
      },
      (err: Error) => done(err),
    );
    return undefined;
  };
  return agent;
}
