// The contract between the extension-API suites (test/vscode/suites/<name>.suite.ts) and the suite
// index that runs them inside the real extension host (runner/suite-index.ts). See test/vscode/README.md.

/** One test of a suite: runs inside VS Code's extension host with the real `vscode` API. */
export interface VscodeTest {
  name: string;
  /** Default 30 000 ms. */
  timeoutMs?: number;
  run(env: VscodeTestEnv): Promise<void>;
}

/** What every test gets. */
export interface VscodeTestEnv {
  /** The workspace folder VS Code has open (a fresh copy of examples/). */
  workspace: string;
  /** Base URL of the demo server (reflection on), e.g. http://127.0.0.1:41234. */
  demoUrl: string;
  /** A directory for this suite's artifacts (test-results/vscode/<suite>/). */
  artifacts: string;
  /**
   * Marks the start of a step of a long test: a test that does not finish in time is reported with
   * its steps and when each began, so the one that hung is named.
   */
  step(what: string): void;
}

/** The result of one test, as the runner writes it. */
export interface VscodeTestResult {
  suite: string;
  name: string;
  ok: boolean;
  error?: string;
  durationMs: number;
}

/** The results file: written after each test; `done` once every suite ran. */
export interface VscodeResults {
  done: boolean;
  /** Milliseconds the protocall.protocall extension took to activate, timed by the runner. */
  activationMs?: number;
  /**
   * Whether activating (by the runner, with no .rpc file open) loaded dist/extension-lazy.js, which
   * activation must not need (esbuild.mjs's `activationModules`); undefined when the extension was
   * already active.
   */
  lazyBundleAtActivation?: boolean;
  /** With the breakdown on: loading (require) of dist/extension.js, and then the activate() call. */
  loadMs?: number;
  activateCallMs?: number;
  /** CPU time (user + system) of the extension host in those intervals: the work, without waiting for a core. */
  activationCpuMs?: number;
  loadCpuMs?: number;
  activateCallCpuMs?: number;
  /** From a CPU profile (sampled every 0.1 ms): Protocall's own code, its modules' top-level code and the rest (activate() and what it runs). */
  topLevelMs?: number;
  activateFnMs?: number;
  results: VscodeTestResult[];
  /** Set when the runner itself failed (e.g. a suite did not load). */
  error?: string;
}

/** Environment variables the outer test sets for the runner. */
export const envVars = {
  results: "PROTOCALL_VSCODE_RESULTS",
  suites: "PROTOCALL_VSCODE_SUITES",
  demoUrl: "PROTOCALL_VSCODE_DEMO_URL",
  workspace: "PROTOCALL_VSCODE_WORKSPACE",
  artifacts: "PROTOCALL_VSCODE_ARTIFACTS",
  /** "1": time require() of dist/extension.js apart from activate() (the activation benchmark). */
  activationBreakdown: "PROTOCALL_VSCODE_ACTIVATION_BREAKDOWN",
  /** A file path: write a CPU profile (.cpuprofile) of Protocall's activation there. */
  activationProfile: "PROTOCALL_VSCODE_ACTIVATION_PROFILE",
} as const;

/** Polls `fn` until it returns something other than undefined (or throws the last error after `timeoutMs`). */
export async function waitFor<T>(
  what: string,
  fn: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ""}`,
      );
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}
