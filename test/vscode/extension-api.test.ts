// Extension-API tests: runs the suites of test/vscode/suites inside the real extension host
// (test/vscode/run-suites.ts), against the demo server, and reports each test as a subtest.
// Run one or more suites alone: PROTOCALL_VSCODE_SUITES=shell,services npm test -- test/vscode
import assert from "node:assert/strict";
import { test } from "node:test";
import { type DemoServer, startDemoServer } from "../../src/demo/server";
import { runInCodeServer, selectedSuites } from "./run-suites";

const suites = selectedSuites();
let demo: DemoServer | undefined;

test("extension-API suites in the real extension host", { timeout: 900_000 }, async (t) => {
  demo = await startDemoServer({ port: 0 });
  try {
    for (const trust of [true, false]) {
      const group = suites.filter((s) => s.trust === trust);
      if (group.length === 0) continue;
      const { results, extensionLogs } = await runInCodeServer(group, trust, demo.url);
      if (results.results.some((r) => !r.ok)) {
        // The extension's log is what a failure in CI leaves to go on: print its end.
        for (const [name, text] of Object.entries(extensionLogs)) {
          const tail = text.split("\n").slice(-80).join("\n");
          t.diagnostic(`${name} (last 80 lines):\n${tail}`);
        }
      }
      assert.equal(results.error, undefined, `the test runner failed: ${results.error}`);
      assert.notEqual(
        results.lazyBundleAtActivation,
        true,
        "activating the extension loaded dist/extension-lazy.js: add the module activation uses to activationModules in esbuild.mjs",
      );
      for (const suite of group) {
        const mine = results.results.filter((r) => r.suite === suite.name);
        await t.test(suite.name, async (st) => {
          assert.ok(mine.length > 0, `the suite ${suite.name} ran no test`);
          for (const r of mine) {
            await st.test(r.name, () => {
              if (!r.ok) throw new Error(r.error ?? "failed");
            });
          }
        });
      }
    }
  } finally {
    await demo.close();
  }
});
