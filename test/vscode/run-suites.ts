// Runs extension-API suites: builds the suite index (test/vscode/runner/suite-index.ts) with the suites
// of test/vscode/suites bundled in, starts code-server and opens a window that runs it as VS Code runs
// extension tests (Protocall as the extension under development, the index as --extensionTestsPath:
// the same paths @vscode/test-electron gives desktop VS Code in run-desktop.ts), and waits for the
// results file. Suites that declare `export const workspaceTrust = false` run in a second
// code-server whose workspace is not trusted.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as esbuild from "esbuild";
import { copyExamplesWorkspace, repoRoot, startCodeServer } from "../support/code-server";
import { openWorkbench, poll } from "../support/workbench";
import { envVars, type VscodeResults } from "./harness";

const suitesDir = join(repoRoot, "test/vscode/suites");

export interface SuiteFile {
  name: string;
  path: string;
  trust: boolean;
}

/** The suites to run: every test/vscode/suites/<name>.suite.ts, or those PROTOCALL_VSCODE_SUITES names. */
export function selectedSuites(): SuiteFile[] {
  const all = readdirSync(suitesDir)
    .filter((f) => f.endsWith(".suite.ts"))
    .sort()
    .map((f) => {
      const path = join(suitesDir, f);
      const trust = !/export\s+const\s+workspaceTrust\s*=\s*false/.test(readFileSync(path, "utf8"));
      return { name: f.replace(/\.suite\.ts$/, ""), path, trust };
    });
  const wanted = (process.env[envVars.suites] ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (wanted.length === 0) return all;
  const unknown = wanted.filter((w) => !all.some((s) => s.name === w));
  if (unknown.length > 0) {
    throw new Error(
      `no suite ${unknown.join(", ")} in test/vscode/suites (there are: ${all.map((s) => s.name).join(", ")})`,
    );
  }
  return all.filter((s) => wanted.includes(s.name));
}

/**
 * Builds the suite index (test/vscode/runner/suite-index.ts) with `suites` bundled in: one file,
 * `<dir>/index.js`, that VS Code loads as --extensionTestsPath and runs by calling its run(). Both
 * runners use it: code-server here (runInCodeServer) and desktop VS Code (run-desktop.ts).
 */
export async function buildRunner(suites: SuiteFile[]): Promise<{ dir: string; index: string }> {
  const dir = await mkdtemp(join(tmpdir(), "protocall-test-runner-"));
  const index = join(dir, "index.js");
  const imports = suites.map((s, i) => `import * as s${i} from ${JSON.stringify(s.path)};`).join("\n");
  const list = suites.map((s, i) => `{ name: ${JSON.stringify(s.name)}, tests: s${i}.tests }`).join(", ");
  const contents = `${imports}
import { suiteIndex } from "./runner/suite-index";
export const { run } = suiteIndex([${list}]);
`;
  await esbuild.build({
    stdin: {
      contents,
      resolveDir: join(repoRoot, "test/vscode"),
      loader: "ts",
      sourcefile: "runner-entry.ts",
    },
    outfile: index,
    bundle: true,
    platform: "node",
    target: "node20",
    format: "cjs",
    sourcemap: "inline",
    external: ["vscode"],
    logLevel: "warning",
  });
  return { dir, index };
}

/**
 * What VS Code is told to load for a test run, the same in code-server and on the desktop: Protocall
 * as the extension under development, and the suite index as the extension tests.
 */
export interface ExtensionTestPaths {
  /** --extensionDevelopmentPath: the folder with Protocall's package.json (the repository). */
  extensionDevelopmentPath: string;
  /** --extensionTestsPath: the built suite index. */
  extensionTestsPath: string;
}

export function extensionTestPaths(runnerIndex: string, protocallFolder = repoRoot): ExtensionTestPaths {
  return { extensionDevelopmentPath: protocallFolder, extensionTestsPath: runnerIndex };
}

/** The environment the suite index reads inside the extension host (see envVars in harness.ts). */
export function runnerEnv(o: {
  resultsFile: string;
  demoUrl: string;
  workspace: string;
  activationBreakdown?: boolean;
  activationProfile?: string;
}): Record<string, string> {
  return {
    ...(o.activationBreakdown ? { [envVars.activationBreakdown]: "1" } : {}),
    ...(o.activationProfile ? { [envVars.activationProfile]: o.activationProfile } : {}),
    [envVars.results]: o.resultsFile,
    [envVars.demoUrl]: o.demoUrl,
    [envVars.workspace]: o.workspace,
    [envVars.artifacts]: join(repoRoot, "test-results/vscode"),
  };
}

/**
 * The workbench URL that makes code-server's window run extension tests: the web workbench reads
 * the desktop's --extensionDevelopmentPath and --extensionTestsPath from its `payload` parameter, as
 * URIs on the server (vscode-remote://<host>/<path>).
 */
export function codeServerTestUrl(workbenchUrl: string, paths: ExtensionTestPaths): string {
  const url = new URL(workbenchUrl);
  const remote = (path: string) => `vscode-remote://${url.host}${path}`;
  url.searchParams.set(
    "payload",
    JSON.stringify([
      ["extensionDevelopmentPath", remote(paths.extensionDevelopmentPath)],
      ["extensionTestsPath", remote(paths.extensionTestsPath)],
    ]),
  );
  return url.toString();
}

export interface RunOutcome {
  results: VscodeResults;
  log: string;
  /**
   * The extension's own logs (its output channels in the extension host, e.g. Protocall.log), name →
   * text, read before code-server's directory is removed: what a failed test leaves to go on.
   */
  extensionLogs: Record<string, string>;
}

/** Protocall's output-channel logs under a code-server user-data directory (logs/<session>/exthost<n>/protocall.protocall/). */
export function protocallLogs(userDataDir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const logs = join(userDataDir, "logs");
  if (!existsSync(logs)) return out;
  for (const session of readdirSync(logs)) {
    for (const host of readdirSync(join(logs, session))) {
      const dir = join(logs, session, host, "protocall.protocall");
      if (!existsSync(dir)) continue;
      for (const file of readdirSync(dir)) out[`${host}/${file}`] = readFileSync(join(dir, file), "utf8");
    }
  }
  return out;
}

export interface RunOptions {
  /** Load Protocall from this folder (e.g. where --install-extension unpacked a .vsix) instead of the repository. */
  protocallFolder?: string;
  /** Have the runner time loading dist/extension.js apart from calling activate(). */
  activationBreakdown?: boolean;
  /** Write a CPU profile of the activation to this file. */
  activationProfile?: string;
  /** Where the window's screenshot goes (default test-results/vscode-<trusted|restricted>). */
  artifacts?: string;
}

/** Runs `suites` in one code-server (trusted or not) and returns the runner's results. */
export async function runInCodeServer(
  suites: SuiteFile[],
  trust: boolean,
  demoUrl: string,
  options: RunOptions = {},
): Promise<RunOutcome> {
  const runner = await buildRunner(suites);
  const workspace = await copyExamplesWorkspace();
  const resultsFile = join(runner.dir, "results.json");
  const group = trust ? "trusted" : "restricted";
  const paths = extensionTestPaths(runner.index, options.protocallFolder);
  // Protocall loads from extensionDevelopmentPath (as on the desktop), not from the extensions folder.
  const server = await startCodeServer({
    workspace,
    trust,
    withoutProtocall: true,
    env: runnerEnv({ resultsFile, demoUrl, workspace, ...options }),
  });
  let wb: Awaited<ReturnType<typeof openWorkbench>> | undefined;
  try {
    wb = await openWorkbench(
      codeServerTestUrl(server.url, paths),
      workspace,
      options.artifacts ?? join(repoRoot, `test-results/vscode-${group}`),
    );
    // The suite index writes the file once Protocall activated (seconds after the window opens), then
    // after each test: no file within 90 s means VS Code never ran it.
    await poll(
      "the test runner to start (its results file)",
      async () => (existsSync(resultsFile) ? true : undefined),
      90_000,
      250,
    ).catch((err: Error) => {
      throw new Error(`${err.message}\ncode-server output:\n${server.output().slice(-4000)}`);
    });
    const budget = 60_000 + suites.length * 120_000;
    const results = await poll(
      "the test runner's results",
      async () => {
        if (!existsSync(resultsFile)) return undefined;
        const r = JSON.parse(readFileSync(resultsFile, "utf8")) as VscodeResults;
        return r.done ? r : undefined;
      },
      budget,
      250,
    ).catch((err: Error) => {
      const partial = existsSync(resultsFile) ? readFileSync(resultsFile, "utf8") : "(no results file)";
      throw new Error(
        `${err.message}\nPartial results: ${partial}\ncode-server output:\n${server.output().slice(-4000)}`,
      );
    });
    await wb.screenshot("end");
    return { results, log: server.output(), extensionLogs: protocallLogs(server.userDataDir) };
  } finally {
    await wb?.close();
    await server.close();
    await rm(runner.dir, { recursive: true, force: true });
    await rm(join(workspace, ".."), { recursive: true, force: true });
  }
}
