// "Protocall: Sign Out of OAuth2…" in the real extension host, against a real OpenID provider
// (oidc-provider): a token fetched for Send is kept (the next Send reuses it), Sign Out removes it from
// the secret storage and from memory, and the next Send gets a new one. With nothing kept, Sign Out
// says so and removes nothing.
import assert from "node:assert/strict";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as vscode from "vscode";
import type { SendApi } from "../../../src/extension/send/api";
import { startBearerServer } from "../../support/bearer-server";
import { clientId, clientSecret, startOidcProvider } from "../../support/oidc-provider";
import type { VscodeTest } from "../harness";

async function api(): Promise<SendApi> {
  const ext = vscode.extensions.getExtension("protocall.protocall");
  assert.ok(ext, "the Protocall extension is installed");
  return ((await ext.activate()) as { send: SendApi }).send;
}

export const tests: VscodeTest[] = [
  {
    name: "Sign Out of OAuth2 removes the kept token: the next Send fetches a new one",
    timeoutMs: 120_000,
    async run(env) {
      const send = await api();
      const op = await startOidcProvider();
      const server = await startBearerServer((token) => op.isActive(token));
      const file = join(env.workspace, "requests", "signout.rpc");
      writeFileSync(
        file,
        `### Echo\n# @auth oauth2 client_credentials issuer=${op.issuer} client-id=${clientId} client-secret=${clientSecret} scope=openid\n# @http2-prior-knowledge\n${server.url}/demo.v1.DemoService/Echo\n\n{"text": "sign out"}\n`,
      );
      const uri = vscode.Uri.file(file);
      const echoTokens = () =>
        server.seen.filter((s) => s.path.endsWith("/Echo")).map((s) => s.authorization);
      const sendOnce = async () => {
        const outcome = await send.send(uri, 0);
        assert.equal(
          outcome?.result?.ok,
          true,
          outcome?.result?.error?.message ?? outcome?.problems.join("\n"),
        );
      };
      try {
        env.step("two sends: one token, kept");
        await sendOnce();
        await sendOnce();
        assert.equal(echoTokens().length, 2);
        assert.equal(echoTokens()[0], echoTokens()[1], "the second send reuses the kept token");

        env.step("sign out of every kept sign-in");
        const removed = (await vscode.commands.executeCommand("protocall.oauth.signOut", "all")) as number;
        assert.ok(removed >= 1, `${removed} removed`);

        env.step("the next send gets a new token");
        const before = op.tokenRequests.length;
        await sendOnce();
        assert.equal(op.tokenRequests.length, before + 1, "a new token was fetched");
        assert.notEqual(echoTokens()[2], echoTokens()[0], "the call carries the new token");

        env.step("signed out again after that send: nothing is left to remove the time after");
        assert.ok(((await vscode.commands.executeCommand("protocall.oauth.signOut", "all")) as number) >= 1);
        assert.equal(await vscode.commands.executeCommand("protocall.oauth.signOut", "all"), 0);
      } finally {
        await server.close();
        await op.close();
        rmSync(file, { force: true });
      }
    },
  },
];
