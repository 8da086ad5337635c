// Starts a real VS Code (code-server 4.100.3, installed by scripts/install-code-server.sh into
// .tools/code-server) with the Protocall extension loaded from this repository (dist/ must be built:
// `npm test` builds it). Each server has its own user-data and extensions directories in a temp dir,
// listens on a free loopback port without authentication, and is killed with its whole process group
// on close() — and, failing that, when the test process exits.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { cp, mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";

export const repoRoot = resolve(__dirname, "../..");
export const codeServerVersion = "4.100.3";
export const codeServerDir = join(repoRoot, ".tools/code-server");
export const codeServerEntry = join(codeServerDir, "node_modules/code-server/out/node/entry.js");
const installStamp = join(codeServerDir, `.installed-${codeServerVersion}`);

export interface CodeServerOptions {
  /** The folder to open. */
  workspace: string;
  /** Extra environment variables for code-server and so for the extension host (and our extension). */
  env?: Record<string, string>;
  /** Folders of other unpacked extensions (each with its package.json) to load next to ours. */
  extraExtensions?: string[];
  /** User settings merged over the defaults (which switch off welcome pages, tips and updates). */
  settings?: Record<string, unknown>;
  /**
   * true (default): the workspace is trusted (--disable-workspace-trust).
   * false: workspace trust is on and the folder is not trusted — restricted mode, without a prompt.
   */
  trust?: boolean;
  /** Do not load the extension from this repository (e.g. to install a .vsix instead). */
  withoutProtocall?: boolean;
  /** An existing extensions directory to use instead of a fresh one. */
  extensionsDir?: string;
  /** Port to listen on (default 0: any free port). */
  port?: number;
  /** Called with each chunk code-server prints (e.g. to show its log). */
  onOutput?: (chunk: string) => void;
}

export interface CodeServer {
  /** The workbench URL, with the workspace folder: http://127.0.0.1:<port>/?folder=<workspace>. */
  url: string;
  /** http://127.0.0.1:<port> */
  origin: string;
  workspace: string;
  userDataDir: string;
  extensionsDir: string;
  /** Everything code-server printed so far (its log, for failure messages). */
  output(): string;
  close(): Promise<void>;
}

/** True when code-server is installed in .tools (scripts/install-code-server.sh ran). */
export function codeServerInstalled(): boolean {
  return existsSync(installStamp) && existsSync(codeServerEntry);
}

/**
 * Makes sure code-server is installed: runs scripts/install-code-server.sh when it is not (about a
 * minute on a fresh machine). Throws with the command to run if the install fails.
 */
export function ensureCodeServer(): void {
  if (codeServerInstalled()) return;
  const r = spawnSync("bash", [join(repoRoot, "scripts/install-code-server.sh")], {
    stdio: ["ignore", "inherit", "inherit"],
    timeout: 600_000,
  });
  if (r.status !== 0 || !codeServerInstalled()) {
    throw new Error(
      "code-server is not installed and its install failed; run `bash scripts/install-code-server.sh` and look at its output",
    );
  }
}

/** The extension's version from package.json (its folder name in an extensions directory). */
export function extensionVersion(): string {
  return JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")).version as string;
}

/** Copies examples/ into a fresh temp dir (so tests may edit files) and returns its path. */
export async function copyExamplesWorkspace(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "protocall-ws-"));
  const ws = join(dir, "examples");
  await cp(join(repoRoot, "examples"), ws, { recursive: true });
  return ws;
}

export const defaultSettings: Record<string, unknown> = {
  "workbench.startupEditor": "none",
  "workbench.welcomePage.walkthroughs.openOnInstall": false,
  "workbench.tips.enabled": false,
  "workbench.enableExperiments": false,
  "workbench.secondarySideBar.defaultVisibility": "hidden",
  "chat.commandCenter.enabled": false,
  "chat.disableAIFeatures": true,
  "telemetry.telemetryLevel": "off",
  "update.mode": "none",
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": false,
  "extensions.ignoreRecommendations": true,
  "git.enabled": false,
  "git.openRepositoryInParentFolders": "never",
  "npm.autoDetect": "off",
  "typescript.tsc.autoDetect": "off",
  "editor.accessibilitySupport": "off",
  "workbench.reduceMotion": "on",
  "window.restoreWindows": "none",
  "files.hotExit": "off",
  "editor.hover.delay": 300,
  "editor.quickSuggestions": { other: false, comments: false, strings: false },
};

/**
 * The user settings of a test editor (code-server or desktop VS Code): the defaults above, and
 * workspace trust off (trusted) or on with the folder untrusted and no prompt (restricted mode).
 */
export function editorSettings(trust: boolean): Record<string, unknown> {
  const settings: Record<string, unknown> = { ...defaultSettings };
  if (trust) settings["security.workspace.trust.enabled"] = false;
  else {
    settings["security.workspace.trust.enabled"] = true;
    settings["security.workspace.trust.startupPrompt"] = "never";
    settings["security.workspace.trust.banner"] = "always";
    settings["security.workspace.trust.untrustedFiles"] = "open";
  }
  return settings;
}

const running = new Set<ChildProcess>();
function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {
      // already gone
    }
  }
}
let hooked = false;
function hookExit(): void {
  if (hooked) return;
  hooked = true;
  process.on("exit", () => {
    for (const child of running) killGroup(child, "SIGKILL");
  });
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.once(signal, () => {
      for (const child of running) killGroup(child, "SIGKILL");
      process.exit(128 + (signal === "SIGINT" ? 2 : signal === "SIGTERM" ? 15 : 1));
    });
  }
}

/** Starts code-server on a free loopback port; resolves once it listens (the workbench loads later). */
export async function startCodeServer(o: CodeServerOptions): Promise<CodeServer> {
  ensureCodeServer();
  const root = await mkdtemp(join(tmpdir(), "pcs-"));
  const userDataDir = join(root, "ud");
  const extensionsDir = o.extensionsDir ?? join(root, "ext");
  await mkdir(join(userDataDir, "User"), { recursive: true });
  await mkdir(extensionsDir, { recursive: true });
  if (!o.withoutProtocall) {
    if (!existsSync(join(repoRoot, "dist/extension.js"))) {
      throw new Error("dist/extension.js is missing: build first (`npm run build`; `npm test` builds)");
    }
    await symlink(repoRoot, join(extensionsDir, `protocall.protocall-${extensionVersion()}`), "dir");
  }
  const links: string[] = [];
  for (const ext of o.extraExtensions ?? []) {
    const manifest = JSON.parse(readFileSync(join(ext, "package.json"), "utf8"));
    const link = join(
      extensionsDir,
      `${manifest.publisher}.${manifest.name}-${manifest.version}` || basename(ext),
    );
    await rm(link, { recursive: true, force: true });
    await symlink(resolve(ext), link, "dir");
    links.push(link);
  }
  const trust = o.trust ?? true;
  await writeFile(
    join(userDataDir, "User/settings.json"),
    JSON.stringify({ ...editorSettings(trust), ...o.settings }, null, 2),
  );
  const config = join(root, "config.yaml");
  await writeFile(config, "auth: none\n");

  const args = [
    codeServerEntry,
    "--config",
    config,
    "--auth",
    "none",
    "--bind-addr",
    `127.0.0.1:${o.port ?? 0}`,
    "--disable-telemetry",
    "--disable-update-check",
    "--disable-getting-started-override",
    "--user-data-dir",
    userDataDir,
    "--extensions-dir",
    extensionsDir,
  ];
  if (trust) args.push("--disable-workspace-trust");
  args.push(o.workspace);

  hookExit();
  const child = spawn(process.execPath, args, {
    cwd: o.workspace,
    detached: true, // its own process group, killed as one on close
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...o.env, HOME: process.env.HOME ?? root },
  });
  running.add(child);
  let out = "";
  const onData = (d: Buffer) => {
    out += d.toString();
    o.onOutput?.(d.toString());
    if (out.length > 2_000_000) out = out.slice(-1_000_000);
  };
  child.stdout?.on("data", onData);
  child.stderr?.on("data", onData);

  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    const exited = new Promise<void>((r) => {
      if (child.exitCode !== null || child.signalCode !== null) r();
      else child.once("exit", () => r());
    });
    killGroup(child, "SIGTERM");
    const timer = setTimeout(() => killGroup(child, "SIGKILL"), 3000);
    await exited;
    clearTimeout(timer);
    // Children of the group that outlived the main process (extension host, language server).
    killGroup(child, "SIGKILL");
    running.delete(child);
    // In an extensions directory of the caller's, remove only what was linked into it here.
    if (o.extensionsDir) for (const link of links) await rm(link, { force: true }).catch(() => undefined);
    await rm(root, { recursive: true, force: true, maxRetries: 3 }).catch(() => undefined);
  };

  try {
    const origin = await new Promise<string>((resolveUrl, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`code-server did not listen within 60 s. Its output:\n${out}`)),
        60_000,
      );
      const check = () => {
        const m = /HTTP server listening on (http:\/\/[^\s/]+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolveUrl(m[1]);
        }
      };
      child.stdout?.on("data", check);
      child.stderr?.on("data", check);
      child.once("exit", (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`code-server exited (${code ?? signal}) before listening. Its output:\n${out}`));
      });
      check();
    });
    return {
      url: `${origin}/?folder=${encodeURIComponent(o.workspace)}`,
      origin,
      workspace: o.workspace,
      userDataDir,
      extensionsDir,
      output: () => out,
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
