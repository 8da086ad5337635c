// A real HTTP proxy for tests: Debian's tinyproxy, started with its own configuration on a loopback
// port (optionally asking for Basic credentials), its log read back to see each CONNECT.
//
// Go's rule (and ours) never proxies `localhost` or loopback IP literals, so tests name their loopback
// servers `0.0.0.0`: an address that is not a loopback literal (so it is proxied), that needs no hosts
// file or resolver, and that Linux connects to the local machine (so the proxy reaches a server
// listening on 127.0.0.1).
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const TINYPROXY = "/usr/bin/tinyproxy";

/** Whether tinyproxy is installed (`.ci/run` installs it). */
export function hasTinyproxy(): boolean {
  return existsSync(TINYPROXY);
}

/** A server URL (http://127.0.0.1:PORT) as a proxied client must name it: http://0.0.0.0:PORT. */
export function viaProxyName(url: string): string {
  return url.replace("//127.0.0.1:", "//0.0.0.0:");
}

export interface TestProxy {
  /** http://127.0.0.1:PORT (with credentials when the proxy asks for them). */
  readonly url: string;
  /** The CONNECT requests the proxy logged so far (`host:port` each). */
  connects(): string[];
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

function waitForPort(port: number, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 20_000;
  return new Promise((resolve, reject) => {
    const attempt = () => {
      if (child.exitCode !== null) {
        reject(new Error(`tinyproxy exited (${child.exitCode}): ${output()}`));
        return;
      }
      const s = net.connect({ host: "127.0.0.1", port });
      s.once("connect", () => {
        s.destroy();
        resolve();
      });
      s.once("error", () => {
        s.destroy();
        if (Date.now() > deadline) reject(new Error(`tinyproxy did not listen on ${port}: ${output()}`));
        else setTimeout(attempt, 50);
      });
    };
    attempt();
  });
}

/**
 * Starts tinyproxy on a free loopback port; `auth` makes it ask for those Basic credentials, and
 * `connectPorts` limits the ports it tunnels to (others are refused with 403).
 */
export async function startTinyproxy(
  auth?: { user: string; password: string },
  connectPorts?: number[],
): Promise<TestProxy> {
  const dir = mkdtempSync(join(tmpdir(), "protocall-proxy-"));
  const log = join(dir, "tinyproxy.log");
  const port = await freePort();
  const config = [
    `Port ${port}`,
    "Listen 127.0.0.1",
    "Timeout 60",
    `LogFile "${log}"`,
    "LogLevel Connect",
    "MaxClients 100",
    ...(auth ? [`BasicAuth ${auth.user} ${auth.password}`] : []),
    ...(connectPorts ?? []).map((p) => `ConnectPort ${p}`),
  ];
  const conf = join(dir, "tinyproxy.conf");
  writeFileSync(conf, `${config.join("\n")}\n`);
  const child = spawn(TINYPROXY, ["-d", "-c", conf], { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout?.on("data", (d: Buffer) => {
    output += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    output += d.toString();
  });
  await waitForPort(port, child, () => output);
  const creds = auth ? `${encodeURIComponent(auth.user)}:${encodeURIComponent(auth.password)}@` : "";
  return {
    url: `http://${creds}127.0.0.1:${port}`,
    connects() {
      const text = existsSync(log) ? readFileSync(log, "utf8") : "";
      return [...text.matchAll(/Request \(file descriptor \d+\): CONNECT (\S+) HTTP/g)].map(
        (m) => m[1] ?? "",
      );
    },
    stop() {
      return new Promise((resolve) => {
        if (child.exitCode !== null) {
          resolve();
          return;
        }
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      });
    },
  };
}
