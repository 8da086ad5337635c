// The token source as the call pipeline asks for it (InputIo.tokens): each front end makes one with
// its way of reaching the person and of keeping tokens, and the pipeline asks it on every call.
import { parseAuthSpec } from "../auth-spec";
import type { BearerTokens } from "../invoke/io";
import { bearerToken, type TokenInteraction, type TokenStore } from "./token-source";

export interface BearerTokenOptions {
  /** How sign-ins reach the person; without it, grants that need one fail with a clear error. */
  interaction?: TokenInteraction;
  /** Where tokens outlive the process (the editor's secret storage). */
  store?: TokenStore;
}

export function bearerTokens(options: BearerTokenOptions = {}): BearerTokens {
  return {
    async bearer(o, io) {
      const text = o.auth ?? "";
      const notes: string[] = [];
      const token = await bearerToken(parseAuthSpec(text), text, {
        env: io.env,
        cwd: io.cwd,
        proxy: o.proxy,
        cacert: o.cacert,
        insecure: o.insecure,
        interaction: options.interaction,
        store: options.store,
        log: (line) => notes.push(line),
      });
      return { token, notes };
    },
  };
}
