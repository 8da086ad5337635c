// How the editor gets `--auth` bearer tokens (`# @auth`, an environment's `$auth`): sign-ins that need
// the person open the browser with `vscode.env.openExternal` (the authorization code grant takes the
// redirect on a loopback port of the extension host) or show the device code in a notification, and
// tokens are kept in the editor's secret storage, so a window reload does not sign in again.
import * as vscode from "vscode";
import { bearerTokens } from "../../core/auth/bearer-tokens";
import type { StoredToken, TokenStore } from "../../core/auth/token-source";
import type { BearerTokens } from "../../core/invoke/io";
import type { ProtocallContext } from "../context";

/** Secret storage keys of OAuth2 tokens: this prefix and the token source's store key. */
const keyPrefix = "protocall.oauth2.";

export function editorTokens(ctx: ProtocallContext): BearerTokens {
  const store: TokenStore = {
    async get(key) {
      const text = await ctx.secrets.get(keyPrefix + key);
      if (!text) return undefined;
      try {
        return JSON.parse(text) as StoredToken;
      } catch {
        return undefined;
      }
    },
    async set(key, token) {
      await ctx.secrets.store(keyPrefix + key, JSON.stringify(token));
    },
  };
  return bearerTokens({
    store,
    interaction: {
      notify: (text) => {
        ctx.log.info(text);
        void vscode.window.showInformationMessage(`Protocall: ${text}`);
      },
      openUrl: (url) => Promise.resolve(vscode.env.openExternal(vscode.Uri.parse(url, true))),
    },
  });
}
