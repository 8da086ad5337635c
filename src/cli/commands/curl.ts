// `protocall curl <url> [flags]`: a drop-in for `buf curl`. Parses the flags, then runs the call.
// The invoke core is loaded only after parsing, so `--help` and usage errors stay fast.
import { homedir } from "node:os";
import { isatty } from "node:tty";
import type { CliContext, Command } from "../context";
import { version } from "../version";
import { curlHelp, parseCurlArgs } from "./curl-args";

export const command: Command = {
  async run(args: string[], ctx: CliContext): Promise<number> {
    const { options, help } = parseCurlArgs(args);
    if (help) {
      ctx.stdout.write(curlHelp());
      return 0;
    }
    // Before anything creates a Headers: Node's own class costs ~30 ms to load (see light-headers.ts).
    (await import("../../core/invoke/light-headers")).installLightHeaders();
    const [{ runCurl }, { promptPassword }] = await Promise.all([
      import("../../core/invoke/run-curl"),
      import("../../core/invoke/prompt-password"),
    ]);
    // ctx.stdin is created lazily (only when the call reads stdin), so it is not touched here.
    const isProcess = ctx.stdout === process.stdout;
    const stdinIsTTY = isProcess
      ? isatty(0)
      : (ctx.stdin as NodeJS.ReadableStream & { isTTY?: boolean }).isTTY === true;
    const controller = new AbortController();
    const onSigint = () => controller.abort();
    if (isProcess) process.once("SIGINT", onSigint);
    try {
      return await runCurl(options, {
        cwd: ctx.cwd,
        env: ctx.env,
        get stdin() {
          return ctx.stdin;
        },
        stdinIsTTY,
        promptPassword: stdinIsTTY ? (prompt) => promptPassword(prompt, ctx.stdin, ctx.stderr) : undefined,
        homedir: ctx.env.HOME || homedir(),
        stdout: ctx.stdout,
        stderr: ctx.stderr,
        product: `protocall/${version}`,
        signal: controller.signal,
      });
    } finally {
      if (isProcess) process.off("SIGINT", onSigint);
    }
  },
};
