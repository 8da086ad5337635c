// Runs the extension-API suites in desktop VS Code through @vscode/test-electron (`npm run
// test:desktop`, scripts/test-desktop.mjs). Everything but the editor is shared with the code-server
// runner (run-suites.ts): the same suites (selectedSuites), the same suite index (buildRunner), the
// same two paths (extensionTestPaths: Protocall under development, the index as extension tests), the
// same environment for the index and the same user settings (editorSettings).
// VS Code itself is downloaded once into .vscode-test/ (PROTOCALL_VSCODE_CACHE) at the version of
// the code-server the other editor tests use (PROTOCALL_VSCODE_VERSION, e.g. `stable`), or taken from
// PROTOCALL_VSCODE_EXECUTABLE. Where it can be neither downloaded nor found, resolveDesktopVscode()
// says so in one line (DesktopUnavailable) instead of failing later with a stack trace.
// runTests() always adds --disable-workspace-trust, so suites that need an untrusted workspace run
// in a VS Code started with runTests' own arguments minus that flag (launchWithWorkspaceTrust).
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  downloadAndUnzipVSCode,
  ProgressReportStage,
  runTests,
  type TestOptions,
} from "@vscode/test-electron";
import { copyExamplesWorkspace, editorSettings, repoRoot } from "../support/code-server";
import type { VscodeResults } from "./harness";
import {
  buildRunner,
  type ExtensionTestPaths,
  extensionTestPaths,
  runnerEnv,
  type SuiteFile,
} from "./run-suites";

/** The VS Code version the desktop suites run in: that of code-server 4.100.3 unless overridden. */
export const desktopVersion = process.env.PROTOCALL_VSCODE_VERSION || "1.100.3";
/** Where test-electron keeps the downloaded VS Code. */
export const desktopCache = process.env.PROTOCALL_VSCODE_CACHE || join(repoRoot, ".vscode-test");

/** Desktop VS Code is not available here; the message says why and what to do, in one line. */
export class DesktopUnavailable extends Error {
  override readonly name = "DesktopUnavailable";
}

/** The desktop VS Code executable: PROTOCALL_VSCODE_EXECUTABLE, else test-electron's download. */
export async function resolveDesktopVscode(log: (line: string) => void = () => {}): Promise<string> {
  const given = process.env.PROTOCALL_VSCODE_EXECUTABLE;
  if (given) {
    if (!existsSync(given)) {
      throw new DesktopUnavailable(
        `PROTOCALL_VSCODE_EXECUTABLE names ${given}, which does not exist; set it to a VS Code executable (e.g. /usr/share/code/code) or unset it to download VS Code`,
      );
    }
    return given;
  }
  try {
    return await downloadAndUnzipVSCode({
      version: desktopVersion,
      cachePath: desktopCache,
      reporter: {
        report(report) {
          if (report.stage === ProgressReportStage.ResolvingCDNLocation) {
            log(`downloading VS Code ${desktopVersion} into ${desktopCache}…`);
          }
        },
        error() {},
      },
    });
  } catch (err) {
    const why = (err instanceof Error ? err.message : String(err)).split("\n")[0];
    throw new DesktopUnavailable(
      `cannot download VS Code ${desktopVersion} (${why}); test:desktop downloads it once into ${desktopCache}: where it cannot, set PROTOCALL_VSCODE_EXECUTABLE to an installed VS Code, or run the same suites in code-server with \`npm test -- test/vscode\``,
    );
  }
}

export interface DesktopLaunch {
  /** What runTests gets. */
  options: TestOptions & { vscodeExecutablePath: string; extensionTestsPath: string };
  /** The folder holding this run's user data and extensions (removed afterwards). */
  profileDir: string;
}

/**
 * The runTests options for one run: the shared paths, the workspace as the folder to open, a fresh
 * profile (user data with the test settings, extensions) and the suite index's environment.
 */
export async function desktopLaunch(o: {
  executable: string;
  paths: ExtensionTestPaths;
  workspace: string;
  trust: boolean;
  env: Record<string, string>;
}): Promise<DesktopLaunch> {
  const profileDir = await mkdtemp(join(tmpdir(), "protocall-vscode-desktop-"));
  await mkdir(join(profileDir, "user-data/User"), { recursive: true });
  await mkdir(join(profileDir, "extensions"), { recursive: true });
  await writeFile(
    join(profileDir, "user-data/User/settings.json"),
    JSON.stringify(editorSettings(o.trust), null, 2),
  );
  return {
    profileDir,
    options: {
      vscodeExecutablePath: o.executable,
      extensionDevelopmentPath: o.paths.extensionDevelopmentPath,
      extensionTestsPath: o.paths.extensionTestsPath,
      launchArgs: [
        o.workspace,
        `--user-data-dir=${join(profileDir, "user-data")}`,
        `--extensions-dir=${join(profileDir, "extensions")}`,
      ],
      extensionTestsEnv: o.env,
    },
  };
}

/**
 * Starts VS Code as runTests does (its arguments, in its order) but with workspace trust on, for the
 * suites that need an untrusted workspace; resolves with VS Code's exit code.
 */
export function launchWithWorkspaceTrust(options: DesktopLaunch["options"]): Promise<number> {
  const args = [
    ...(options.launchArgs ?? []),
    "--no-sandbox",
    "--disable-gpu-sandbox",
    "--disable-updates",
    "--skip-welcome",
    "--skip-release-notes",
    `--extensionTestsPath=${options.extensionTestsPath}`,
    ...[options.extensionDevelopmentPath].flat().map((path) => `--extensionDevelopmentPath=${path}`),
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(options.vscodeExecutablePath, args, {
      env: { ...process.env, ...options.extensionTestsEnv },
      stdio: ["ignore", "inherit", "inherit"],
    });
    child.on("error", reject);
    child.on("close", (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
}

/** Runs `suites` in one desktop VS Code (trusted or not) and returns the suite index's results. */
export async function runInDesktop(
  suites: SuiteFile[],
  trust: boolean,
  demoUrl: string,
  executable: string,
): Promise<VscodeResults> {
  const runner = await buildRunner(suites);
  const workspace = await copyExamplesWorkspace();
  const resultsFile = join(runner.dir, "results.json");
  const launch = await desktopLaunch({
    executable,
    paths: extensionTestPaths(runner.index),
    workspace,
    trust,
    env: runnerEnv({ resultsFile, demoUrl, workspace }),
  });
  try {
    // A failed test makes VS Code exit with 1 (runTests then rejects): the results say which.
    if (trust) await runTests(launch.options).catch(() => undefined);
    else await launchWithWorkspaceTrust(launch.options);
    if (!existsSync(resultsFile)) {
      return {
        done: false,
        results: [],
        error: "VS Code exited without running the suites (see its output above)",
      };
    }
    return JSON.parse(readFileSync(resultsFile, "utf8")) as VscodeResults;
  } finally {
    await rm(launch.profileDir, { recursive: true, force: true });
    await rm(runner.dir, { recursive: true, force: true });
    await rm(join(workspace, ".."), { recursive: true, force: true });
  }
}
