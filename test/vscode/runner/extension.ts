// The test-runner extension (publisher protocall-test), loaded next to Protocall in code-server and
// activated on start-up. It runs the suites bundled into it (test/vscode/extension-api.test.ts builds
// it with an entry that lists them) inside the real extension host, one test at a time with a
// timeout, and writes the results to the JSON file named by PROTOCALL_VSCODE_RESULTS after each test.
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
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

function withTimeout<T>(p: Promise<T>, ms: number, name: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`"${name}" did not finish within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

function describe(err: unknown): string {
  if (err instanceof Error) return err.stack ?? `${err.name}: ${err.message}`;
  return String(err);
}

export async function runSuites(suites: BundledSuite[]): Promise<void> {
  const resultsPath = process.env[envVars.results];
  if (!resultsPath) return; // loaded outside a test run: do nothing
  const results: VscodeResults = { done: false, results: [] };
  const artifactsRoot = process.env[envVars.artifacts] ?? join(process.cwd(), "test-results/vscode");
  try {
    const ext = vscode.extensions.getExtension("protocall.protocall");
    if (!ext) throw new Error("the extension protocall.protocall is not installed in this VS Code");
    const start = performance.now();
    await ext.activate();
    results.activationMs = performance.now() - start;
    write(resultsPath, results);

    for (const suite of suites) {
      const env: VscodeTestEnv = {
        workspace: process.env[envVars.workspace] ?? vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? "",
        demoUrl: process.env[envVars.demoUrl] ?? "",
        artifacts: join(artifactsRoot, suite.name),
      };
      mkdirSync(env.artifacts, { recursive: true });
      for (const t of suite.tests) {
        const t0 = performance.now();
        try {
          await withTimeout(
            Promise.resolve().then(() => t.run(env)),
            t.timeoutMs ?? 30_000,
            t.name,
          );
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
        }
        // Leave the next test a clean editor.
        await vscode.commands
          .executeCommand("workbench.action.closeAllEditors")
          .then(undefined, () => undefined);
        write(resultsPath, results);
      }
    }
  } catch (err) {
    results.error = describe(err);
  }
  results.done = true;
  write(resultsPath, results);
}
