// A server for load tests (h2c, Connect, gRPC and gRPC-Web on one port, with reflection): Greet
// records every name it is sent (so tests see per-request variables and data rows arrive) and can
// stall once for a while (the coordinated-omission test); DemoService is the demo's, for streams.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, beforeEach } from "node:test";
import type { ConnectRouter } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import type { LoadReport } from "../../src/core/load/report";
import { registerReflection } from "../../src/core/schema/reflection-server";
import { demoService } from "../../src/demo/demo-service";
import { DemoService, file_demo_v1_demo } from "../../src/gen/demo/v1/demo_pb";
import { file_demo_v1_greet, GreetService } from "../../src/gen/demo/v1/greet_pb";
import { file_google_rpc_error_details } from "../../src/gen/google/rpc/error_details_pb";
import { runCli } from "./cli";

export interface LoadServer {
  url: string;
  /** Every name Greet was sent, in order of arrival. */
  names: string[];
  /** HTTP/2 connections accepted so far. */
  connections(): number;
  /** Greet calls answered. */
  greets(): number;
  /** The Greet call after `after` more calls (and every one arriving meanwhile) waits `ms` before answering. */
  stallOnce(ms: number, after?: number): void;
  close(): Promise<void>;
}

export async function startLoadServer(): Promise<LoadServer> {
  const names: string[] = [];
  let stall: Promise<void> | undefined;
  let stallNext = 0;
  let stallAt = 0;
  let answered = 0;
  const routes = (router: ConnectRouter) => {
    router.service(GreetService, {
      async greet(req) {
        names.push(req.name);
        if (stallNext > 0 && names.length >= stallAt) {
          const ms = stallNext;
          stallNext = 0;
          stall = new Promise((resolve) => setTimeout(resolve, ms));
          void stall.then(() => {
            stall = undefined;
          });
        }
        if (stall) await stall;
        answered++;
        return { greeting: `Hello, ${req.name || "world"}!` };
      },
    });
    router.service(DemoService, demoService);
    registerReflection(router, [file_demo_v1_demo, file_demo_v1_greet, file_google_rpc_error_details], {
      versions: ["v1", "v1alpha"],
    });
  };
  const server = http2.createServer(connectNodeAdapter({ routes }) as never);
  const sessions = new Set<http2.ServerHttp2Session>();
  let accepted = 0;
  server.on("session", (s) => {
    accepted++;
    sessions.add(s);
    s.once("close", () => sessions.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    names,
    greets: () => answered,
    connections: () => accepted,
    stallOnce(ms, after = 0) {
      stallNext = ms;
      stallAt = names.length + after;
    },
    close() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sessions) s.destroy();
      });
    },
  };
}

/**
 * The set-up the `protocall load` CLI tests share: a load server for the file's tests (its recorded
 * names cleared before each), a folder to run in, `.rpc` files written there (HOST stands for the
 * server's URL), and `load` to run the built CLI with a JSON report and read it back.
 */
export function loadFixture(prefix: string) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  mkdirSync(join(dir, ".git"));
  let current: LoadServer | undefined;
  before(async () => {
    current = await startLoadServer();
  });
  after(async () => {
    await current?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    if (current) current.names.length = 0;
  });
  let n = 0;
  const server = (): LoadServer => {
    if (!current) throw new Error("the load server is not started yet (use it inside a test)");
    return current;
  };
  /** Writes a .rpc file (HOST replaced by the server's URL); returns its path. */
  const rpc = (text: string): string => {
    const file = join(dir, `load${++n}.rpc`);
    writeFileSync(file, text.replaceAll("HOST", server().url));
    return file;
  };
  const greet = (body = '{"name": "x"}', options = "") =>
    rpc(`### Greet\n# @http2-prior-knowledge\n${options}HOST/demo.v1.GreetService/Greet\n\n${body}\n`);
  const load = async (
    args: string[],
    timeoutMs = 60_000,
  ): Promise<{ code: number; stderr: string; report: LoadReport }> => {
    const out = join(dir, `report${++n}.json`);
    const r = await runCli(["load", ...args, "--reporter", `json=${out}`], { cwd: dir, timeoutMs });
    assert.equal(r.timedOut, false, r.stderr);
    let report: LoadReport;
    try {
      report = JSON.parse(readFileSync(out, "utf8"));
    } catch {
      assert.fail(`no report (exit ${r.code}): ${r.stderr}`);
    }
    return { code: r.code, stderr: r.stderr, report };
  };
  return { dir, server, rpc, greet, load };
}
