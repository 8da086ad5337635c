// Measures Protocall's activation in the real extension host (code-server): `runs` fresh servers, each
// with the suite index (test/vscode) timing require() of dist/extension.js and then activate(). Prints
// one JSON line per run: { activationMs, loadMs, activateCallMs }.
// Usage: node --import tsx bench/lib/activation-run.ts <runs> [folder of an installed Protocall]
import { runInCodeServer } from "../../test/vscode/run-suites";

const runs = Number(process.argv[2] ?? 5);
const protocallFolder = process.argv[3] || undefined;

async function main(): Promise<void> {
  for (let i = 0; i < runs; i++) {
    const { results } = await runInCodeServer([], true, "", {
      protocallFolder,
      activationBreakdown: true,
      artifacts: `${process.cwd()}/test-results/bench-activation`,
    });
    if (results.error) throw new Error(results.error);
    process.stdout.write(
      `${JSON.stringify({
        activationMs: results.activationMs,
        loadMs: results.loadMs,
        activateCallMs: results.activateCallMs,
        activationCpuMs: results.activationCpuMs,
        loadCpuMs: results.loadCpuMs,
        activateCallCpuMs: results.activateCallCpuMs,
        topLevelMs: results.topLevelMs,
        activateFnMs: results.activateFnMs,
      })}\n`,
    );
  }
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
