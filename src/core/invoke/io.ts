// What the invoke core needs from its process to read inputs: the working directory, the
// environment, standard input and the home directory (for ~/.netrc). Passed in, so tests can use
// real files and streams without touching the real process.

import type { TokenInteraction, TokenStore } from "../auth/token-source";

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
  /** How `--auth` grants that need a person reach them (device code, authorization code). */
  authInteraction?: TokenInteraction;
  /** Where `--auth` tokens outlive the process besides its cache file (the editor's secret storage). */
  tokenStore?: TokenStore;
}
