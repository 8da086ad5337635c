// The custom LSP requests (src/server/protocol.ts) over a real stdio connection: parameters of the
// wrong shape are refused on arrival with an InvalidParams error that names the request and the
// field, and the server keeps answering afterwards.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { ServiceSourcesResult } from "../../src/server/protocol";
import {
  paramsChecks,
  refreshRequest,
  serviceChildrenRequest,
  serviceRequestTextRequest,
  serviceSourcesRequest,
} from "../../src/server/protocol";
import { LspClient } from "./lsp-client";

const invalidParams = -32602;

describe("custom requests check their parameters", { timeout: 60_000 }, () => {
  let dir: string;
  let client: LspClient;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "protocall-custom-requests-"));
    writeFileSync(join(dir, "README.md"), "no schema here\n");
    client = await LspClient.start({ rootDir: dir });
  });
  after(async () => {
    await client?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The error the request gets (it must fail). */
  async function refused(method: string, params: unknown): Promise<{ code: number; message: string }> {
    try {
      await client.request(method, params);
    } catch (err) {
      return err as { code: number; message: string };
    }
    assert.fail(`${method} accepted ${JSON.stringify(params)}`);
  }

  const cases: [string, unknown, RegExp][] = [
    [
      serviceSourcesRequest.method,
      {},
      /^protocall\/serviceSources: params\.servers must be an array, not missing$/,
    ],
    [
      serviceSourcesRequest.method,
      { servers: [{ url: 3 }] },
      /params\.servers\[0\]\.url must be a string, not number 3/,
    ],
    [
      serviceSourcesRequest.method,
      { servers: [{ url: "http://h", insecure: "yes" }] },
      /params\.servers\[0\]\.insecure must be true or false, not string "yes"/,
    ],
    [
      serviceChildrenRequest.method,
      { source: 7 },
      /^protocall\/serviceChildren: params\.source must be a string/,
    ],
    [
      serviceChildrenRequest.method,
      { source: "build:x", parent: { kind: "method", name: "a.B" } },
      /params\.parent\.kind must be one of "package", "service", not string "method"/,
    ],
    [
      serviceRequestTextRequest.method,
      { source: "build:x", method: "a.B/C" },
      /^protocall\/serviceRequestText: params\.baseUrl must be a string, not missing$/,
    ],
    [serviceRequestTextRequest.method, "text", /params must be an object, not string "text"/],
  ];
  for (const [method, params, message] of cases) {
    test(`${method} ${JSON.stringify(params)}: InvalidParams`, async () => {
      const err = await refused(method, params);
      assert.equal(err.code, invalidParams);
      assert.match(err.message, message);
    });
  }

  test("a request without parameters is refused by the connection", async () => {
    const err = await refused(serviceChildrenRequest.method, undefined);
    assert.equal(err.code, invalidParams);
  });

  test("good parameters still get their answer after the refusals", async () => {
    const result = await client.request<ServiceSourcesResult>(serviceSourcesRequest.method, {
      servers: [{ url: "http://127.0.0.1:1", name: "down" }],
    });
    assert.deepEqual(
      result.sources.map((s) => [s.kind, s.label]),
      [["server", "down"]],
    );
    assert.equal(await client.request(refreshRequest.method, null), null);
  });

  test("every request with parameters has a check", () => {
    for (const type of [serviceSourcesRequest, serviceChildrenRequest, serviceRequestTextRequest]) {
      assert.equal(typeof paramsChecks[type.method], "function", type.method);
    }
  });
});
