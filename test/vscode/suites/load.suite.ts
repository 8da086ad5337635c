// "Load Test…" in the real extension host resolves and authorizes its request as Send does: a server
// without reflection is called through the workspace's own .proto files, and a request with
// `# @auth oauth2 client_credentials` gets its token from a real OpenID provider (oidc-provider): one
// token for the whole run, carried by every call.
import assert from "node:assert/strict";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as vscode from "vscode";
import type { LoadReport } from "../../../src/core/load/report";
import { startDemoServer } from "../../../src/demo/server";
import { startBearerServer } from "../../support/bearer-server";
import { clientId, clientSecret, startOidcProvider } from "../../support/oidc-provider";
import type { VscodeTest } from "../harness";

async function loadTest(file: string, rate = "20", duration = "2s"): Promise<LoadReport> {
  const uri = vscode.Uri.file(file);
  await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri));
  const report = (await vscode.commands.executeCommand("protocall.loadTest", uri, 0, { rate, duration })) as
    | LoadReport
    | undefined;
  assert.ok(report, "the load test ran and returned its report");
  return report;
}

function failures(report: LoadReport): string {
  return JSON.stringify({ errors: report.total.errors, checks: report.total.failedChecks });
}

export const tests: VscodeTest[] = [
  {
    name: "a load test of a server without reflection resolves the method through the workspace's protos",
    timeoutMs: 120_000,
    async run(env) {
      const server = await startDemoServer({ http: "h2c", reflection: false });
      const file = join(env.workspace, "requests", "load-no-reflection.rpc");
      writeFileSync(
        file,
        `### Greet\n# @http2-prior-knowledge\n${server.url}/demo.v1.GreetService/Greet\n\n{"name": "load"}\n`,
      );
      try {
        env.step("load test at 20 requests/s for 2 s");
        const report = await loadTest(file);
        assert.ok(report.total.requests >= 20, `${report.total.requests} requests`);
        assert.equal(report.total.failed, 0, failures(report));
        assert.equal(report.total.passed, report.total.requests);
      } finally {
        await server.close();
        rmSync(file, { force: true });
      }
    },
  },
  {
    name: "a load test of a # @auth oauth2 request gets a token from the provider; every call carries it",
    timeoutMs: 120_000,
    async run(env) {
      const op = await startOidcProvider();
      const api = await startBearerServer((token) => op.isActive(token));
      const file = join(env.workspace, "requests", "load-oauth.rpc");
      writeFileSync(
        file,
        `### Echo\n# @auth oauth2 client_credentials issuer=${op.issuer} client-id=${clientId} client-secret=${clientSecret}\n# @http2-prior-knowledge\n${api.url}/demo.v1.DemoService/Echo\n\n{"text": "load"}\n`,
      );
      try {
        env.step("load test at 20 requests/s for 2 s");
        const report = await loadTest(file);
        assert.equal(report.total.failed, 0, failures(report));
        assert.ok(report.total.passed >= 20, `${report.total.passed} passed`);
        const calls = api.seen.filter((s) => s.path.endsWith("/Echo"));
        assert.ok(calls.length >= report.total.passed, `${calls.length} calls seen`);
        assert.ok(
          calls.every((c) => c.accepted),
          "every call carried a token the provider holds valid",
        );
        // One token for the whole run (the language server, which reads the server's reflection for
        // the editor, fetches its own: it runs in another process).
        assert.equal(new Set(calls.map((c) => c.authorization)).size, 1, "one token for the run");
        assert.ok(op.tokenRequests.every((t) => t.grantType === "client_credentials"));
      } finally {
        await api.close();
        await op.close();
        rmSync(file, { force: true });
      }
    },
  },
];
