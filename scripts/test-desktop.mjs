#!/usr/bin/env node
// `npm run test:desktop`: the extension-API suites of test/vscode/suites in desktop VS Code, through
// @vscode/test-electron (test/vscode/run-desktop.ts), with the suite index and paths that the
// code-server run (`npm test -- test/vscode`) uses. The npm script builds dist/ first; this file runs
// with `node --import tsx`. PROTOCALL_VSCODE_SUITES=shell,send picks suites, as for code-server.
// VS Code is downloaded once into .vscode-test/ (or taken from PROTOCALL_VSCODE_EXECUTABLE); without
// a display on Linux, run it under `xvfb-run -a`. Prints each test, then "N passed, N failed"; exits 1
// when a test failed, and with a one-line reason when VS Code cannot be had.

async function main() {
  const { selectedSuites } = await import("../test/vscode/run-suites.ts");
  const { DesktopUnavailable, resolveDesktopVscode, runInDesktop } = await import(
    "../test/vscode/run-desktop.ts"
  );
  const suites = selectedSuites();
  const executable = await resolveDesktopVscode((line) => console.log(`protocall tests: ${line}`));
  if (process.platform === "linux" && !process.env.DISPLAY && !process.env.WAYLAND_DISPLAY) {
    throw new DesktopUnavailable(
      "desktop VS Code needs a display and there is none: run `xvfb-run -a npm run test:desktop` (Debian: apt-get install xvfb)",
    );
  }
  const { startDemoServer } = await import("../src/demo/server.ts");
  const demo = await startDemoServer({ port: 0 });
  let passed = 0;
  let failed = 0;
  try {
    for (const trust of [true, false]) {
      const group = suites.filter((s) => s.trust === trust);
      if (group.length === 0) continue;
      console.log(
        `protocall tests: ${group.map((s) => s.name).join(", ")} in desktop VS Code (${trust ? "trusted" : "restricted"} workspace)`,
      );
      const results = await runInDesktop(group, trust, demo.url, executable);
      if (results.error) {
        failed++;
        console.log(`✖ the test runner failed: ${results.error}`);
      }
      for (const suite of group) {
        const mine = results.results.filter((r) => r.suite === suite.name);
        if (mine.length === 0 && !results.error) {
          failed++;
          console.log(`✖ ${suite.name}: ran no test`);
        }
        for (const r of mine) {
          if (r.ok) passed++;
          else failed++;
          console.log(`${r.ok ? "✔" : "✖"} ${suite.name} › ${r.name} (${Math.round(r.durationMs)} ms)`);
          if (!r.ok) console.log(`  ${(r.error ?? "failed").replace(/\n/g, "\n  ")}`);
        }
      }
    }
  } finally {
    await demo.close();
  }
  console.log(`${passed} passed, ${failed} failed`);
  return failed === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    // Known conditions (no VS Code, no display, an unknown suite name) in one line; bugs with their stack.
    const known = err?.name === "DesktopUnavailable" || /^no suite /.test(err?.message ?? "");
    console.error(`protocall tests: ${known ? err.message : (err?.stack ?? err)}`);
    process.exit(1);
  },
);
