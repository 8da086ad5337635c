// The demo services (with reflection) behind a bearer-token check, for the OAuth2 tests: a request
// without `Authorization: Bearer ...` fails as unauthenticated, and every request's path and
// Authorization value are recorded, so a test can see which token each call and each reflection
// request carried. HTTP/1.1 and h2c on one port would need the demo server's sniffing; h2c alone is
// enough here (the tests pass --http2-prior-knowledge).
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { Code, ConnectError, type ConnectRouter } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { registerReflection } from "../../src/core/schema/reflection-server";
import { demoService } from "../../src/demo/demo-service";
import { DemoService, file_demo_v1_demo } from "../../src/gen/demo/v1/demo_pb";

export interface SeenRequest {
  path: string;
  authorization: string;
  at: number;
  /** Whether the token was taken (a bearer token the provider still holds valid). */
  accepted: boolean;
}

export interface BearerServer {
  url: string;
  seen: SeenRequest[];
  close(): Promise<void>;
}

/** `isActive`: whether the provider still takes the token (expired ones fail as unauthenticated). */
export async function startBearerServer(
  isActive?: (token: string) => Promise<boolean>,
): Promise<BearerServer> {
  const seen: SeenRequest[] = [];
  const handler = connectNodeAdapter({
    routes: (router: ConnectRouter) => {
      router.service(DemoService, demoService);
      registerReflection(router, [file_demo_v1_demo]);
    },
    interceptors: [
      (next) => async (req) => {
        const authorization = req.header.get("authorization") ?? "";
        const seenRequest = {
          path: new URL(req.url).pathname,
          authorization,
          at: Date.now(),
          accepted: false,
        };
        seen.push(seenRequest);
        const token = /^Bearer (\S+)$/.exec(authorization)?.[1];
        if (!token) throw new ConnectError("a bearer token is required", Code.Unauthenticated);
        if (isActive && !(await isActive(token)))
          throw new ConnectError("the token has expired", Code.Unauthenticated);
        seenRequest.accepted = true;
        return next(req);
      },
    ],
  });
  const server = http2.createServer(handler as never);
  const open = new Set<http2.ServerHttp2Session>();
  server.on("session", (s) => {
    open.add(s);
    s.once("close", () => open.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of open) s.destroy();
      }),
  };
}
