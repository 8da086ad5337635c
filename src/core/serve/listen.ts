// Starting a server on its port, as every server we run does it: listen (port 0 for any free one,
// 127.0.0.1 unless a host is given), fail with the listen error (a port in use) rather than an
// unhandled "error" event, and name the address as a URL (IPv6 hosts in brackets).
import type net from "node:net";

/** Listens on `port` (default 0) and `host` (default 127.0.0.1); resolves once the server listens. */
export async function listenOn(server: net.Server, port?: number, host?: string): Promise<net.AddressInfo> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port ?? 0, host ?? "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  return server.address() as net.AddressInfo;
}

/** The base URL of a listening address, e.g. `https://[::1]:8443`. */
export function baseUrlOf(address: net.AddressInfo, tls: boolean): string {
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return `${tls ? "https" : "http"}://${host}:${address.port}`;
}
