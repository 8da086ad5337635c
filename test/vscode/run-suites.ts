// Runs extension-API suites: builds the test-runner extension (test/vscode/runner) with the suites in
// test/vscode/suites bundled into it, starts the demo server and code-server with Protocall and the
// runner loaded, opens the workbench (the extension host starts when a window connects), waits for
// the results file. Suites that declare
// `export const workspaceTrust = false` run in a second code-server whose workspace is not trusted.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
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

/** Builds the runner extension with `suites` bundled into it; returns its folder (with package.json). */
export async function buildRunner(suites: SuiteFile[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "protocall-test-runner-"));
  await writeFile(
    join(dir, "package.json"),
    JSON.stringify({
      name: "protocall-test-runner",
      publisher: "protocall-test",
      version: "0.0.1",
      engines: { vscode: "^1.100.0" },
      activationEvents: ["*"],
      main: "./extension.js",
      // Runs in restricted mode too (the restricted-mode suites need it).
      capabilities: { untrustedWorkspaces: { supported: true }, virtualWorkspaces: false },
    }),
  );
  const imports = suites.map((s, i) => `import * as s${i} from ${JSON.stringify(s.path)};`).join("\n");
  const list = suites.map((s, i) => `{ name: ${JSON.stringify(s.name)}, tests: s${i}.tests }`).join(", ");
  const contents = `${imports}
import { runSuites } from "./runner/extension";
export function activate() { void runSuites([${list}]); }
export function deactivate() {}
`;
  await esbuild.build({
    stdin: {
      contents,
      resolveDir: join(repoRoot, "test/vscode"),
      loader: "ts",
      sourcefile: "runner-entry.ts",
    },
    outfile: join(dir, "extension.js"),
    bundle: true,
    platform: "node",
    target: "node20",
    format: "cjs",
    sourcemap: "inline",
    external: ["vscode"],
    logLevel: "warning",
  });
  return dir;
}

export interface RunOutcome {
  results: VscodeResults;
  log: string;
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
  const resultsFile = join(runner, "results.json");
  const group = trust ? "trusted" : "restricted";
  const server = await startCodeServer({
    workspace,
    trust,
    extraExtensions: options.protocallFolder ? [runner, options.protocallFolder] : [runner],
    withoutProtocall: options.protocallFolder !== undefined,
    env: {
      ...(options.activationBreakdown ? { [envVars.activationBreakdown]: "1" } : {}),
      ...(options.activationProfile ? { [envVars.activationProfile]: options.activationProfile } : {}),
      [envVars.results]: resultsFile,
      [envVars.demoUrl]: demoUrl,
      [envVars.workspace]: workspace,
      [envVars.artifacts]: join(repoRoot, "test-results/vscode"),
    },
  });
  let wb: Awaited<ReturnType<typeof openWorkbench>> | undefined;
  try {
    wb = await openWorkbench(
      server.url,
      workspace,
      options.artifacts ?? join(repoRoot, `test-results/vscode-${group}`),
    );
    // The runner writes the file once Protocall activated (seconds after the window opens), then after
    // each test: no file within 90 s means the runner never ran.
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
    return { results, log: server.output() };
  } finally {
    await wb?.close();
    await server.close();
    await rm(runner, { recursive: true, force: true });
    await rm(join(workspace, ".."), { recursive: true, force: true });
  }
}
