// `protocall curl <url> [flags]`: a drop-in for `buf curl`. Parses the flags, then runs the call.
// The invoke core is loaded only after parsing, so `--help` and usage errors stay fast.
import type { CliContext, Command } from "../context";
import { callIo } from "../io";
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
    const { runCurl } = await import("../run-curl");
    return runCurl(options, callIo(ctx));
  },
};
