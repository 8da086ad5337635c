// How the editor gets `--auth` bearer tokens (`# @auth`, an environment's `$auth`): sign-ins that need
// the person open the browser with `vscode.env.openExternal` (the authorization code grant takes the
// redirect on a loopback port of the extension host) or show the device code in a notification, and
// tokens are kept in the editor's secret storage, so a window reload does not sign in again.
import * as vscode from "vscode";
import { bearerTokens } from "../../core/auth/bearer-tokens";
import { forgetTokens, type StoredToken, type TokenStore } from "../../core/auth/token-source";
import type { BearerTokens } from "../../core/invoke/io";
import type { ProtocallContext } from "../context";

/** Secret storage keys of OAuth2 tokens: this prefix and the token source's store key. */
const keyPrefix = "protocall.oauth2.";
/**
 * The kept sign-ins (store key and whose token it is), so that Sign Out can list and remove them: the
 * secret storage cannot list its keys. Kept in the secret storage too.
 */
const indexKey = "protocall.oauth2-index";

interface KeptSignIn {
  key: string;
  label: string;
}

async function keptSignIns(ctx: ProtocallContext): Promise<KeptSignIn[]> {
  try {
    const list = JSON.parse((await ctx.secrets.get(indexKey)) ?? "[]") as KeptSignIn[];
    return Array.isArray(list) ? list.filter((e) => typeof e?.key === "string") : [];
  } catch {
    return [];
  }
}

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
    async set(key, token, about) {
      await ctx.secrets.store(keyPrefix + key, JSON.stringify(token));
      const kept = await keptSignIns(ctx);
      if (!kept.some((e) => e.key === key && e.label === about)) {
        await ctx.secrets.store(
          indexKey,
          JSON.stringify([...kept.filter((e) => e.key !== key), { key, label: about }]),
        );
      }
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

/**
 * "Protocall: Sign Out of OAuth2": removes kept sign-ins (their tokens in the secret storage and in
 * memory), chosen from a list, or every one with `which` "all" (scripts, tests). The next request that
 * needs one signs in (or fetches its token) again. Returns how many were removed.
 */
export async function signOutOAuth(ctx: ProtocallContext, which?: unknown): Promise<number> {
  const kept = await keptSignIns(ctx);
  if (kept.length === 0) {
    void vscode.window.showInformationMessage("Protocall: no OAuth2 sign-ins are kept.");
    return 0;
  }
  let chosen = kept;
  if (which !== "all") {
    const picked = await vscode.window.showQuickPick(
      kept.map((e) => ({ label: e.label, picked: true, entry: e })),
      { title: "Sign Out of OAuth2", placeHolder: "The sign-ins to remove", canPickMany: true },
    );
    if (!picked || picked.length === 0) return 0;
    chosen = picked.map((p) => p.entry);
  }
  for (const e of chosen) await ctx.secrets.delete(keyPrefix + e.key);
  const left = kept.filter((e) => !chosen.includes(e));
  if (left.length > 0) await ctx.secrets.store(indexKey, JSON.stringify(left));
  else await ctx.secrets.delete(indexKey);
  // Tokens held in memory are dropped too; those still kept are read again from the secret storage.
  forgetTokens();
  ctx.log.info(`Signed out of ${chosen.map((e) => e.label).join(", ")}`);
  void vscode.window.showInformationMessage(
    `Protocall: signed out of ${chosen.length === 1 ? chosen[0].label : `${chosen.length} OAuth2 sign-ins`}. The next request that needs a token signs in again.`,
  );
  return chosen.length;
}
