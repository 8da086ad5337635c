// `protocall beta registry webhook create|list|delete`: the same commands as `protocall webhook`,
// under the name the registry's own CLI uses.
import { ProtocallError } from "../../core/errors";
import type { Command } from "../context";
import { runWebhook } from "./webhook";

const usage = `Usage: protocall beta registry webhook <create|list|delete> [flags]

The same as \`protocall webhook create|list|delete\`, spelled as the registry's own CLI spells it.
Run \`protocall beta registry webhook <subcommand> --help\` for its flags.
`;

export const command: Command = {
  async run(args, ctx) {
    if (args.length === 0 || args[0] === "-h" || args[0] === "--help") {
      (args.length === 0 ? ctx.stderr : ctx.stdout).write(usage);
      return args.length === 0 ? 1 : 0;
    }
    if (args[0] !== "registry" || (args[1] !== "webhook" && args[1] !== undefined)) {
      throw new ProtocallError(
        `unknown command "beta ${args.slice(0, 2).join(" ")}": use \`protocall beta registry webhook create|list|delete\``,
      );
    }
    const rest = args.slice(2);
    if (rest[0] === "send-test") {
      throw new ProtocallError("send-test is not a beta command: use `protocall webhook send-test`");
    }
    if (args[1] === undefined || rest.length === 0) {
      ctx.stderr.write(usage);
      return 1;
    }
    return runWebhook(rest, ctx, "protocall beta registry webhook");
  },
};
