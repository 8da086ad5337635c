// Runs the extension-API suites inside the real extension host, one test at a time with a timeout,
// and writes the results to a JSON file after each test (the outer test process reads it). Called
// by the suite index (suite-index.ts), which code-server and desktop VS Code load alike.
import { mkdirSync, realpathSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as vscode from "vscode";
import { envVars, type VscodeResults, type VscodeTest, type VscodeTestEnv } from "../harness";

export interface BundledSuite {
  name: string;
  tests: VscodeTest[];
}

function write(path: string, results: VscodeResults): void {
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, JSON.stringify(results, null, 2));
  renameSync(tmp, path);
}

function withTimeout<T>(p: Promise<T>, ms: number, name: string, steps?: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<T>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`"${name}" did not finish within ${ms} ms${steps?.() ?? ""}`)),
        ms,
      );
    }),
  ]).finally(() => clearTimeout(timer));
}

/** Protocall's settings as the user and the workspace set them (undefined: not set there). */
type SettingsSnapshot = Map<string, { global: unknown; workspace: unknown }>;

function settingKeys(ext: vscode.Extension<unknown>): string[] {
  const contributed = (ext.packageJSON as { contributes?: { configuration?: unknown } }).contributes
    ?.configuration;
  const sections = (Array.isArray(contributed) ? contributed : [contributed]) as {
    properties?: Record<string, unknown>;
  }[];
  return sections.flatMap((c) => Object.keys(c?.properties ?? {}));
}

function snapshotSettings(keys: string[]): SettingsSnapshot {
  const config = vscode.workspace.getConfiguration();
  const out: SettingsSnapshot = new Map();
  for (const key of keys) {
    const seen = config.inspect(key);
    out.set(key, { global: seen?.globalValue, workspace: seen?.workspaceValue });
  }
  return out;
}

/**
 * Puts back the settings a failed test left changed (a test that timed out never reached its
 * `finally`): otherwise every later test of the window runs with them. Returns the keys restored.
 */
async function restoreSettings(before: SettingsSnapshot): Promise<string[]> {
  const config = vscode.workspace.getConfiguration();
  const restored: string[] = [];
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  for (const [key, was] of before) {
    const now = config.inspect(key);
    if (!same(now?.globalValue, was.global)) {
      await config.update(key, was.global, vscode.ConfigurationTarget.Global);
      restored.push(`${key} (user)`);
    }
    if (!same(now?.workspaceValue, was.workspace)) {
      await config.update(key, was.workspace, vscode.ConfigurationTarget.Workspace);
      restored.push(`${key} (workspace)`);
    }
  }
  return restored;
}

/** The steps a test marked (env.step), each with the time it began: "" when it marked none. */
function stepsText(steps: { what: string; at: number }[], t0: number): string {
  if (steps.length === 0) return "";
  const lines = steps.map((s) => `  ${Math.round(s.at - t0)} ms: ${s.what}`);
  return `; its steps began at:\n${lines.join("\n")}\n(the last one did not end)`;
}

function describe(err: unknown): string {
  if (err instanceof Error) return err.stack ?? `${err.name}: ${err.message}`;
  return String(err);
}

interface CpuProfile {
  nodes: {
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
    children?: number[];
  }[];
  samples: number[];
  timeDeltas: number[];
}

/**
 * From a CPU profile of the activation: the time spent in the bundle's code, with everything it calls
 * (each entry into the bundle from outside counted once): its modules' top-level code when it loads
 * (a frame at line 0) and its activate() function and what runs from it.
 */
function timeInBundle(profile: CpuProfile, bundle: string): { topLevelMs: number; activateFnMs: number } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const totals = new Map<number, number>();
  const total = (id: number): number => {
    const known = totals.get(id);
    if (known !== undefined) return known;
    let t = self.get(id) ?? 0;
    for (const c of byId.get(id)?.children ?? []) t += total(c);
    totals.set(id, t);
    return t;
  };
  const inBundle = (id: number | undefined) => {
    const url = id === undefined ? "" : (byId.get(id)?.callFrame.url ?? "");
    return url === bundle || url === `file://${bundle}`;
  };
  let topLevel = 0;
  let activateFn = 0;
  for (const n of profile.nodes) {
    if (!inBundle(n.id) || inBundle(parent.get(n.id))) continue;
    if (n.callFrame.lineNumber === 0 && n.callFrame.functionName === "") topLevel += total(n.id);
    else activateFn += total(n.id);
  }
  return { topLevelMs: topLevel / 1000, activateFnMs: activateFn / 1000 };
}

/** A CPU profile of the extension host (node:inspector), for finding what activation spends time on. */
async function startProfile(): Promise<{ stop(): Promise<unknown> }> {
  const inspector = await import("node:inspector");
  const session = new inspector.Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) =>
      session.post(method, params ?? {}, (err, res) => (err ? reject(err) : resolve(res))),
    );
  await post("Profiler.enable");
  await post("Profiler.setSamplingInterval", { interval: 100 });
  await post("Profiler.start");
  return {
    async stop() {
      const res = (await post("Profiler.stop")) as { profile: unknown };
      session.disconnect();
      return res.profile;
    },
  };
}

/**
 * Runs `suites` one test at a time and returns the results, written after each test to `resultsPath`
 * when given (the outer test process reads that file while the editor runs).
 */
export async function runSuites(suites: BundledSuite[], resultsPath?: string): Promise<VscodeResults> {
  const results: VscodeResults = { done: false, results: [] };
  const save = () => {
    if (resultsPath) write(resultsPath, results);
  };
  const artifactsRoot = process.env[envVars.artifacts] ?? join(process.cwd(), "test-results/vscode");
  try {
    const ext = vscode.extensions.getExtension("protocall.protocall");
    if (!ext) throw new Error("the extension protocall.protocall is not installed in this VS Code");
    const profilePath = process.env[envVars.activationProfile];
    const breakdown = process.env[envVars.activationBreakdown] === "1";
    const profiler = profilePath || breakdown ? await startProfile() : undefined;
    const wasActive = ext.isActive || vscode.workspace.textDocuments.some((d) => d.languageId === "rpc");
    const start = performance.now();
    const cpu0 = process.cpuUsage();
    const cpuMs = (since: NodeJS.CpuUsage) => {
      const d = process.cpuUsage(since);
      return (d.user + d.system) / 1000;
    };
    if (process.env[envVars.activationBreakdown] === "1" && !ext.isActive) {
      // The extension host loads extensions with Node's require, so a module required here is the
      // one activate() then finds in the cache: this splits loading the code from running activate().
      const main = join(ext.extensionPath, ext.packageJSON.main as string);
      require(main);
      results.loadMs = performance.now() - start;
      results.loadCpuMs = cpuMs(cpu0);
      const t1 = performance.now();
      const cpu1 = process.cpuUsage();
      await ext.activate();
      results.activateCallMs = performance.now() - t1;
      results.activateCallCpuMs = cpuMs(cpu1);
    } else {
      await ext.activate();
    }
    results.activationMs = performance.now() - start;
    if (!wasActive) {
      results.lazyBundleAtActivation = Object.keys(require.cache).some((p) =>
        p.endsWith("extension-lazy.js"),
      );
    }
    results.activationCpuMs = cpuMs(cpu0);
    if (profiler) {
      const profile = (await profiler.stop()) as CpuProfile;
      if (profilePath) writeFileSync(profilePath, JSON.stringify(profile));
      // require() runs the file by its real path (the extension's folder may be a symbolic link).
      const bundle = realpathSync(join(ext.extensionPath, ext.packageJSON.main as string));
      Object.assign(results, timeInBundle(profile, bundle));
    }
    save();

    const keys = settingKeys(ext);
    for (const suite of suites) {
      let steps: { what: string; at: number }[] = [];
      const env: VscodeTestEnv = {
        workspace: process.env[envVars.workspace] ?? vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? "",
        demoUrl: process.env[envVars.demoUrl] ?? "",
        artifacts: join(artifactsRoot, suite.name),
        step: (what) => steps.push({ what, at: performance.now() }),
      };
      mkdirSync(env.artifacts, { recursive: true });
      for (const t of suite.tests) {
        const settingsBefore = snapshotSettings(keys);
        const t0 = performance.now();
        const mine: { what: string; at: number }[] = [];
        steps = mine;
        const run = Promise.resolve().then(() => t.run(env));
        try {
          await withTimeout(run, t.timeoutMs ?? 30_000, t.name, () => stepsText(mine, t0));
          results.results.push({
            suite: suite.name,
            name: t.name,
            ok: true,
            durationMs: performance.now() - t0,
          });
        } catch (err) {
          results.results.push({
            suite: suite.name,
            name: t.name,
            ok: false,
            error: describe(err),
            durationMs: performance.now() - t0,
          });
          // A test that timed out is still running: its clean-up (settings it changed, servers it
          // started) must be done before the next test starts, or it fails the tests after it too.
          await withTimeout(
            run.then(
              () => undefined,
              () => undefined,
            ),
            60_000,
            `the clean-up of "${t.name}"`,
          ).catch(() => undefined);
          const restored = await restoreSettings(settingsBefore).catch((e: unknown) => [
            `(failed: ${describe(e)})`,
          ]);
          const failed = results.results[results.results.length - 1];
          if (restored.length > 0) {
            failed.error += `\n(the runner put back the settings it left changed: ${restored.join(", ")})`;
          }
        }
        // Leave the next test a clean editor.
        await vscode.commands
          .executeCommand("workbench.action.closeAllEditors")
          .then(undefined, () => undefined);
        save();
      }
    }
  } catch (err) {
    results.error = describe(err);
  }
  results.done = true;
  save();
  return results;
}
