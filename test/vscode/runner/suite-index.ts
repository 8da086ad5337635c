// The suite index: the module through which every VS Code runs the extension-API suites. The bundle
// that test/vscode/run-suites.ts builds (buildRunner) is this module with the selected suites bundled
// in. VS Code loads it as its extension tests (--extensionTestsPath, with Protocall as the extension
// under development) and calls run(): desktop VS Code through @vscode/test-electron
// (test/vscode/run-desktop.ts, `npm run test:desktop`), code-server through the same two paths given
// in its window's URL (runInCodeServer). A rejection of run() makes VS Code exit with 1; either way
// the results file named by PROTOCALL_VSCODE_RESULTS says which test failed and why.
import { envVars } from "../harness";
import { type BundledSuite, runSuites } from "./run-in-host";

/** Runs every bundled suite; rejects when the runner or a test failed (after writing the results). */
export function suiteIndex(suites: BundledSuite[]): { run(): Promise<void> } {
  return {
    async run() {
      const results = await runSuites(suites, process.env[envVars.results]);
      if (results.error) throw new Error(`the test runner failed: ${results.error}`);
      const failed = results.results.filter((r) => !r.ok);
      if (failed.length > 0) {
        throw new Error(
          `${failed.length} of ${results.results.length} tests failed:\n` +
            failed.map((r) => `  ${r.suite} › ${r.name}: ${r.error ?? "failed"}`).join("\n"),
        );
      }
    },
  };
}
