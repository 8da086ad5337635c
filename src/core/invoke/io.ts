// What the invoke core needs from its process to read inputs: the working directory, the
// environment, standard input and the home directory (for ~/.netrc). Passed in, so tests can use
// real files and streams without touching the real process.

import type { CurlOptions } from "./options";

export interface InputIo {
  /** Relative paths (`-d @file`, `-H @file`, `--netrc-file`) are resolved against this. */
  cwd: string;
  env: NodeJS.ProcessEnv;
  stdin: NodeJS.ReadableStream;
  /** Whether stdin is a terminal (the password prompt of `--user name` needs one). */
  stdinIsTTY: boolean;
  /** Asks for a password on the terminal without echo. Absent when there is no terminal. */
  promptPassword?(prompt: string): Promise<string>;
  /** The user's home directory, for `~/.netrc`. */
  homedir: string;
  /**
   * Where `--auth` bearer tokens come from: src/core/auth's token source, given by the front end
   * with its way of reaching the person (sign-ins) and of keeping tokens (the editor's secrets).
   */
  tokens?: BearerTokens;
}

/** What a bearer token is asked with: the call's `--auth`, and how to reach its provider. */
export type TokenRequest = Pick<CurlOptions, "auth" | "proxy" | "cacert" | "insecure">;

/** The bearer token of a call's `--auth`, fetched or renewed as needed (src/core/auth/bearer-tokens.ts). */
export interface BearerTokens {
  /** The token, and verbose notes about how it was had (`Fetched an OAuth2 token ...`). */
  bearer(o: TokenRequest, io: Pick<InputIo, "env" | "cwd">): Promise<{ token: string; notes: string[] }>;
}
