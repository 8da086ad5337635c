// How the CLI reaches the person for `--auth` grants that need one: the device code and the sign-in
// URL are written to stderr, and the URL is opened in a browser when there is one to open: the
// command in $BROWSER (words split on spaces, the URL appended), else the desktop's opener (`open` on
// macOS, `start` on Windows, `xdg-open` on a Linux desktop).
import { spawn } from "node:child_process";
import { bearerTokens } from "../core/auth/bearer-tokens";
import type { TokenInteraction } from "../core/auth/token-source";
import type { BearerTokens } from "../core/invoke/io";
import type { CliContext } from "./context";

/** The CLI's `--auth` token source: tokens in process memory (and a cache file when asked), sign-ins on the terminal. */
export function cliTokens(ctx: Pick<CliContext, "env" | "stderr">): BearerTokens {
  return bearerTokens({ interaction: cliAuthInteraction(ctx) });
}

export function cliAuthInteraction(ctx: Pick<CliContext, "env" | "stderr">): TokenInteraction {
  return {
    notify: (text) => {
      ctx.stderr.write(`protocall: ${text}\n`);
    },
    openUrl: (url) => openBrowser(url, ctx.env),
  };
}

function browserCommand(env: NodeJS.ProcessEnv): string[] | undefined {
  const configured = env.BROWSER?.trim();
  if (configured) return configured.split(/\s+/);
  if (process.platform === "darwin") return ["open"];
  if (process.platform === "win32") return ["cmd", "/c", "start", '""'];
  if (env.DISPLAY || env.WAYLAND_DISPLAY) return ["xdg-open"];
  return undefined;
}

function openBrowser(url: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  const command = browserCommand(env);
  if (!command) return Promise.resolve(false);
  return new Promise((resolve) => {
    const child = spawn(command[0], [...command.slice(1), url], { stdio: "ignore", detached: true, env });
    child.once("error", () => resolve(false));
    child.once("spawn", () => {
      child.unref();
      resolve(true);
    });
  });
}
