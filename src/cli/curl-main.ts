// The entry point of the `curl` bundle (dist/curl.js): `protocall curl` alone, without the command
// table. bin/protocall.js runs it for `protocall curl ...`, so the call loads only the code it needs
// (a smaller bundle to read and compile, and no wrappers that keep esbuild from dropping unused code).
import { provideRegistryModules } from "../core/registry/provide";
import { command } from "./commands/curl";
import { exitWith, processContext } from "./process-context";

provideRegistryModules();

if (require.main === module) {
  const ctx = processContext();
  const [name, ...rest] = process.argv.slice(2);
  if (name === "curl") {
    exitWith(command.run(rest, ctx), ctx);
  } else {
    ctx.stderr.write(
      "protocall: this bundle runs only `protocall curl`; run bin/protocall.js for the others\n",
    );
    process.exitCode = 1;
  }
}
