// What an AI assistant may reach through `protocall mcp`: the files of one workspace and the servers its
// request files and environments name. An assistant reads whatever a tool returns, and a prompt in a
// response could ask it to call anything, so the scope is closed by default: a server no `.rpc` file
// or environment file of the workspace names, and a file outside the workspace, are refused with
// the flag that would allow them.
import { readdirSync, readFileSync, realpathSync } from "node:fs";
import { isAbsolute, join, relative, resolve } from "node:path";
import { ProtocallError } from "../errors";

export interface WorkspaceScopeOptions {
  /** The workspace folder (absolute). */
  root: string;
  /** Servers allowed besides the workspace's (`--allow-server`), as URLs. */
  allowServers?: readonly string[];
  /** Any server may be called (`--allow-any-server`). */
  anyServer?: boolean;
  /** Files outside the workspace may be read (`--allow-outside-files`). */
  outsideFiles?: boolean;
  /**
   * How the user of this front end allows more, for the refusals (default: the flags of `protocall mcp`).
   * The editor has no flags: there a server is allowed by naming it in a request file.
   */
  allowHints?: AllowHints;
}

/** The end of a refusal: what the user does to allow it. */
export interface AllowHints {
  server(origin: string): string;
  outsideFiles: string;
}

const cliHints: AllowHints = {
  server: (origin) => `start protocall mcp with --allow-server ${origin} (or --allow-any-server) to call it`,
  outsideFiles: "start protocall mcp with --allow-outside-files to allow it",
};

/** Directories never searched for request files. */
const skipped = new Set(["node_modules", ".git", "dist", "out", ".build", ".tools"]);
const urlPattern = /\bhttps?:\/\/[^\s"'`<>{}|\\^]+/g;

export class WorkspaceScope {
  readonly root: string;
  private servers: Set<string> | undefined;

  constructor(private readonly o: WorkspaceScopeOptions) {
    this.root = resolve(o.root);
  }

  /** What the user does to allow what is refused. */
  get hints(): AllowHints {
    return this.o.allowHints ?? cliHints;
  }

  /** The origins (`http://host:port`) the workspace's request and environment files name, sorted. */
  workspaceServers(): string[] {
    if (!this.servers) {
      this.servers = new Set((this.o.allowServers ?? []).map(originOf).filter((s) => s !== undefined));
      for (const file of this.files(
        (name) => name.endsWith(".rpc") || /^protocall\.env(\..*)?\.json$/.test(name),
      )) {
        let text: string;
        try {
          text = readFileSync(file, "utf8");
        } catch {
          continue;
        }
        for (const m of text.matchAll(urlPattern)) {
          const origin = originOf(m[0]);
          if (origin) this.servers.add(origin);
        }
      }
    }
    return [...this.servers].sort();
  }

  /** Throws ProtocallError unless `url` is one of the workspace's servers (or any server is allowed). */
  checkServer(url: string): void {
    if (this.o.anyServer) return;
    const origin = originOf(url);
    if (!origin) throw new ProtocallError(`"${url}" is not an http:// or https:// URL`);
    if (this.workspaceServers().includes(origin)) return;
    throw new ProtocallError(
      `${origin} is not a server of the workspace ${this.root} (no request file or environment names it); ${this.hints.server(origin)}`,
    );
  }

  /** Whether files outside the workspace may be read and written. */
  outsideAllowed(): boolean {
    return this.o.outsideFiles === true;
  }

  /** The absolute path of a file the assistant named (relative to the workspace); throws when it is outside. */
  checkPath(path: string): string {
    const full = resolve(this.root, path);
    if (this.o.outsideFiles) return full;
    let real = full;
    try {
      real = realpathSync(full);
    } catch {
      // A file that does not exist is reported by whoever reads it.
    }
    const rootReal = safeRealpath(this.root);
    const rel = relative(rootReal, real);
    if (rel === "" || (!rel.startsWith("..") && !isAbsolute(rel))) return full;
    throw new ProtocallError(`${path} is outside the workspace ${this.root}; ${this.hints.outsideFiles}`);
  }

  /** Files of the workspace whose name matches, skipping dependency and build folders. */
  files(matches: (name: string) => boolean): string[] {
    const out: string[] = [];
    const walk = (dir: string, depth: number) => {
      if (depth > 12) return;
      let entries: import("node:fs").Dirent[];
      try {
        entries = readdirSync(dir, { withFileTypes: true });
      } catch {
        return;
      }
      for (const e of entries) {
        if (e.isDirectory()) {
          if (!skipped.has(e.name) && !e.name.startsWith(".")) walk(join(dir, e.name), depth + 1);
        } else if (e.isFile() && matches(e.name)) out.push(join(dir, e.name));
      }
    };
    walk(this.root, 0);
    return out.sort();
  }
}

function safeRealpath(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

/** `http://host:port` of a URL (default ports written out); undefined when it is not http(s). */
export function originOf(url: string): string | undefined {
  try {
    const u = new URL(url);
    if (u.protocol !== "http:" && u.protocol !== "https:") return undefined;
    const port = u.port || (u.protocol === "https:" ? "443" : "80");
    return `${u.protocol}//${u.hostname}:${port}`;
  } catch {
    return undefined;
  }
}
