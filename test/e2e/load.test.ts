/// <reference lib="dom" />
// "Load Test…" in a real VS Code (code-server, driven by Chromium) against the demo server: the
// CodeLens asks the rate and duration of a request without a `# @load` line, the load panel opens
// beside the editor and draws the live charts while the run goes, then shows the report; a request
// with a `# @load` line runs as it says, and Stop ends a run early with the report of what ran.
// Screenshots: test-results/load/.
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { FrameLocator } from "playwright-core";
import { type DemoServer, startDemoServer } from "../../src/demo/server";
import { type CodeServer, copyExamplesWorkspace, repoRoot, startCodeServer } from "../support/code-server";
import { openWorkbench, poll, type Workbench } from "../support/workbench";

const artifacts = join(repoRoot, "test-results/load");
let demo: DemoServer;
let server: CodeServer;
let wb: Workbench;

before(
  async () => {
    demo = await startDemoServer();
    const workspace = await copyExamplesWorkspace();
    const file = join(workspace, "requests/demo.rpc");
    let text = await readFile(file, "utf8");
    text = text.replace("@host = http://127.0.0.1:8080", `@host = ${demo.url}`);
    // A request that says how to load it: for a minute, unless stopped.
    text = text.replace(
      "### Greet someone\n",
      "### Greet a crowd\n# @load rate=20 duration=60s threshold=errors<1%\n{{host}}/demo.v1.GreetService/Greet\n\n" +
        '{"name": "crowd"}\n\n### Greet someone\n',
    );
    await writeFile(file, text);
    server = await startCodeServer({ workspace });
    wb = await openWorkbench(server.url, workspace, artifacts);
    await wb.openFile("requests/demo.rpc");
  },
  { timeout: 150_000 },
);

after(async () => {
  await wb?.close();
  await server?.close();
  await demo?.close();
});

/** Waits until the panel's charts have drawn `points` seconds while the run still goes. */
async function liveChart(frame: FrameLocator, points: number): Promise<void> {
  await poll(
    `the live chart with ${points} seconds`,
    async () => {
      const drawn = Number(
        (await frame
          .locator("#latency path.p50")
          .getAttribute("data-points")
          .catch(() => null)) ?? 0,
      );
      const rps = Number(
        (await frame
          .locator("#throughput path.rps")
          .getAttribute("data-points")
          .catch(() => null)) ?? 0,
      );
      const state = await frame.locator("#state").textContent();
      return drawn >= points && rps >= points && state === "running" ? true : undefined;
    },
    60_000,
  ).catch(async (err) => {
    await wb.screenshot("no-live-chart");
    const read = async (sel: string) =>
      (await frame
        .locator(sel)
        .textContent()
        .catch(() => "?")) ?? "";
    throw new Error(
      `${(err as Error).message}: state ${await read("#state")}, ${await read("#live")}, ${await read("#report")}`,
    );
  });
  await wb.waitForText(/req\/s · p50 [\d.]+ ms · p99 [\d.]+ ms/, frame.locator("#live"));
}

/** Brings the .rpc editor back to the front (a panel beside it takes the focus) and clicks a lens. */
async function clickLoadLens(index: number): Promise<void> {
  await wb.page.locator(".tabs-container .tab").filter({ hasText: "demo.rpc" }).first().click();
  await wb.clickCodeLens("Load Test…", index);
}

test('"Load Test…" asks the rate and duration, draws the live charts and shows the report', {
  timeout: 180_000,
}, async () => {
  // The second request of the file: "Greet someone" (the first is "Greet a crowd").
  await clickLoadLens(1);
  await wb.inputBox("20", "requests per second");
  await wb.inputBox("6s", "duration");
  const frame = await wb.webviewFrame("Load: Greet someone");
  await liveChart(frame, 2);
  await wb.screenshot("live");
  await wb.waitForText("done", frame.locator("#state"), 60_000);
  const report = (await frame.locator("#report").textContent()) ?? "";
  assert.match(report, /requests\s+120 \(120 passed, 0 failed/);
  assert.match(report, /latency\s+min [\d.]+ ms\s+p50/);
  await wb.screenshot("report");
});

test("a request's # @load line shapes the run; Stop ends it and the report covers what ran", {
  timeout: 180_000,
}, async () => {
  await clickLoadLens(0);
  const frame = await wb.webviewFrame("Load: Greet a crowd");
  await liveChart(frame, 2);
  await frame.locator("button#stop").click();
  await wb.waitForText(/^stopped · thresholds held$/, frame.locator("#state"), 60_000);
  const report = (await frame.locator("#report").textContent()) ?? "";
  const requests = Number(/requests\s+(\d+) \(/.exec(report)?.[1]);
  assert.ok(requests >= 20 && requests < 1200, `${requests} requests before Stop:\n${report}`);
  assert.match(report, /threshold errors<1%: held/);
  await wb.screenshot("stopped");
});
