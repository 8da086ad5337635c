// A mock server of the demo services in this process, with stub files written to a temporary
// directory, and clients of every protocol (connect-node's, real HTTP on loopback).
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import {
  createConnectTransport,
  createGrpcTransport,
  createGrpcWebTransport,
} from "@connectrpc/connect-node";
import type { MockCall } from "../../../src/core/mock/call-log";
import { type MockSchema, mockSchemaOf } from "../../../src/core/mock/mock-schema";
import type { Recorder } from "../../../src/core/mock/record";
import { type MockServer, startMockServer } from "../../../src/core/mock/server";
import { StubSet } from "../../../src/core/mock/stub-set";
import type { Upstream } from "../../../src/core/mock/upstream";
import type { ConnectionLimits } from "../../../src/core/serve/connection-guard";
import { DemoService, file_demo_v1_demo } from "../../../src/gen/demo/v1/demo_pb";
import { file_demo_v1_greet, GreetService } from "../../../src/gen/demo/v1/greet_pb";

export const demoSchema: MockSchema = mockSchemaOf([
  ...file_demo_v1_demo.services,
  ...file_demo_v1_greet.services,
]);

export interface TestMock {
  server: MockServer;
  stubs: StubSet;
  dir: string;
  url: string;
  log: string[];
  calls: MockCall[];
  close(): Promise<void>;
}

/** Starts a mock with the given stub files (name → text). */
export async function startTestMock(
  files: Record<string, string>,
  options: {
    generate?: boolean;
    maxMessageBytes?: number;
    watch?: boolean;
    upstream?: Upstream;
    recorder?: Recorder;
    limits?: ConnectionLimits;
    /** Stub files and directories to serve instead of the temporary directory. */
    paths?: string[];
  } = {},
): Promise<TestMock> {
  const dir = mkdtempSync(join(tmpdir(), "protocall-mock-"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const log: string[] = [];
  const calls: MockCall[] = [];
  const stubs = new StubSet({
    paths: options.paths ?? [dir],
    cwd: dir,
    schema: demoSchema,
    log: (l) => log.push(l),
  });
  const errors = await stubs.load();
  if (errors > 0) throw new Error(`stub errors: ${log.join("\n")}`);
  const server = await startMockServer({
    schema: demoSchema,
    stubs,
    generate: options.generate,
    maxMessageBytes: options.maxMessageBytes,
    upstream: options.upstream,
    recorder: options.recorder,
    limits: options.limits,
    onCall: (c) => calls.push(c),
  });
  if (options.watch) stubs.watch();
  return {
    server,
    stubs,
    dir,
    url: server.url,
    log,
    calls,
    async close() {
      stubs.close();
      await server.close();
    },
  };
}

export type Protocol = "connect" | "connect-h2" | "grpc" | "grpc-web";
export const protocols: Protocol[] = ["connect", "grpc", "grpc-web"];

function transport(url: string, protocol: Protocol) {
  switch (protocol) {
    case "connect":
      return createConnectTransport({ baseUrl: url, httpVersion: "1.1" });
    case "connect-h2":
      return createConnectTransport({ baseUrl: url, httpVersion: "2" });
    case "grpc":
      return createGrpcTransport({ baseUrl: url });
    default:
      return createGrpcWebTransport({ baseUrl: url, httpVersion: "1.1" });
  }
}

export function demoClient(url: string, protocol: Protocol = "connect") {
  return createClient(DemoService, transport(url, protocol));
}

export function greetClient(url: string, protocol: Protocol = "connect") {
  return createClient(GreetService, transport(url, protocol));
}

/** Waits until `check` holds (polling), or fails after `ms`. */
export async function until(
  check: () => boolean | Promise<boolean>,
  what: string,
  ms = 10_000,
): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
