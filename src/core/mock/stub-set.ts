// The stubs a mock serves: read from `.rpc` files and directories (every `.rpc` below a directory),
// reloaded when a file changes, with a per-file "last good" rule: a file with an error is reported at
// file:line:col and its previous stubs keep serving until it is fixed. Also the call counters behind
// sequences (the Nth call of a stub gets its Nth answer), which a reset sets back to zero.
import { type FSWatcher, readdirSync, readFileSync, statSync, watch } from "node:fs";
import { join, relative, resolve } from "node:path";
import { errorMessage, ProtocallError } from "../errors";
import { parseStubFile } from "../rpcfile/stub-syntax";
import type { MockSchema } from "./mock-schema";
import { type LoadedAnswer, loadStubText, type Stub } from "./stub-load";
import { byPriority } from "./stub-match";

export interface StubSetOptions {
  /** Stub files and directories. */
  readonly paths: readonly string[];
  readonly cwd: string;
  readonly schema: MockSchema;
  readonly env?: NodeJS.ProcessEnv;
  /** Problems and reloads, one line each. */
  readonly log: (line: string) => void;
}

/** The `.rpc` files of the paths: files as given, directories searched (hidden and node_modules skipped). */
export function stubFiles(paths: readonly string[], cwd: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
      a.name.localeCompare(b.name),
    )) {
      if (entry.name.startsWith(".") || entry.name === "node_modules") continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".rpc")) out.push(path);
    }
  };
  for (const p of paths) {
    const path = resolve(cwd, p);
    let st: ReturnType<typeof statSync>;
    try {
      st = statSync(path);
    } catch {
      throw new ProtocallError(
        `stub file or directory ${p} does not exist; give .rpc stub files or directories holding them`,
      );
    }
    if (st.isDirectory()) walk(path);
    else out.push(path);
  }
  return [...new Set(out)];
}

export class StubSet {
  /** Stubs by file (the last good set of each). */
  private readonly byFile = new Map<string, Stub[]>();
  /** Stubs by method key, in the order they are tried. */
  private byMethod = new Map<string, Stub[]>();
  private readonly calls = new Map<string, number>();
  private readonly watchers: FSWatcher[] = [];
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private files: string[] = [];
  /** How many times the stubs were (re)loaded, for tests and the admin path. */
  generation = 0;

  constructor(private readonly options: StubSetOptions) {}

  /** Loads every file. Returns the number of errors (problems are logged). */
  async load(): Promise<number> {
    this.files = stubFiles(this.options.paths, this.options.cwd);
    let errors = 0;
    for (const file of this.files) errors += await this.loadFile(file);
    this.index();
    return errors;
  }

  /** How a file is named in messages: relative to the working directory when inside it. */
  private shown(file: string): string {
    const rel = relative(this.options.cwd, file);
    return rel.startsWith("..") ? file : rel;
  }

  private async loadFile(file: string): Promise<number> {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (err) {
      this.options.log(
        `${this.shown(file)}: cannot read: ${errorMessage(err)}${this.byFile.has(file) ? "; its previous stubs keep serving" : ""}`,
      );
      return 1;
    }
    // The services the stubs name are linked first (the schema links services on first use).
    const services = new Set(parseStubFile(text).stubs.map((s) => s.method.split("/")[0]));
    await Promise.all([...services].map((name) => this.options.schema.resolve(name)));
    const loaded = loadStubText(text, this.shown(file), this.options.schema, this.options.env);
    for (const p of loaded.problems) this.options.log(p);
    if (loaded.errors > 0) {
      if (this.byFile.has(file))
        this.options.log(`${this.shown(file)}: not reloaded; its previous stubs keep serving`);
      return loaded.errors;
    }
    this.byFile.set(file, loaded.stubs);
    return 0;
  }

  private index(): void {
    const byMethod = new Map<string, Stub[]>();
    let order = 0;
    for (const file of this.files) {
      for (const stub of this.byFile.get(file) ?? []) {
        stub.order = order++;
        const key = `${stub.method.parent.typeName}/${stub.method.name}`;
        let list = byMethod.get(key);
        if (!list) byMethod.set(key, (list = []));
        list.push(stub);
      }
    }
    for (const [k, list] of byMethod) byMethod.set(k, byPriority(list));
    this.byMethod = byMethod;
    this.generation++;
  }

  /** The stubs of a method, in the order they are tried. */
  forMethod(key: string): readonly Stub[] {
    return this.byMethod.get(key) ?? [];
  }

  /** Every stub. */
  all(): Stub[] {
    return [...this.byMethod.values()].flat();
  }

  /** Counts a call of the stub and returns its answer: the Nth call the Nth answer, the last repeating. */
  nextAnswer(stub: Stub): { answer: LoadedAnswer; call: number } {
    const key = stub.label;
    const n = this.calls.get(key) ?? 0;
    this.calls.set(key, n + 1);
    return { answer: stub.answers[Math.min(n, stub.answers.length - 1)], call: n + 1 };
  }

  /** Sets every stub's call count back to zero (sequences start over). */
  reset(): void {
    this.calls.clear();
  }

  /** Reloads a file when it changes (and picks up new files in watched directories). */
  watch(): void {
    const dirs = new Set<string>();
    for (const p of this.options.paths) {
      const path = resolve(this.options.cwd, p);
      try {
        if (statSync(path).isDirectory()) dirs.add(path);
      } catch {
        // reported at load
      }
    }
    const schedule = (file: string) => {
      clearTimeout(this.timers.get(file));
      // Editors save in several steps (truncate, write, rename): wait for the file to settle.
      this.timers.set(
        file,
        setTimeout(() => {
          this.timers.delete(file);
          void this.reload(file);
        }, 100),
      );
    };
    for (const file of this.files) {
      try {
        this.watchers.push(watch(file, () => schedule(file)));
      } catch {
        // a file that cannot be watched is served as loaded
      }
    }
    for (const dir of dirs) {
      try {
        this.watchers.push(
          watch(dir, { recursive: true }, (_event, name) => {
            if (name && String(name).endsWith(".rpc")) schedule(join(dir, String(name)));
          }),
        );
      } catch {
        // recursive watching is not available: files present at start are still watched
      }
    }
  }

  /**
   * Loads a file again, or for the first time (a stub file created after the start, which the
   * editor's own file watcher reports); a file that no longer exists takes its stubs with it.
   */
  update(file: string): Promise<void> {
    return this.reload(resolve(this.options.cwd, file));
  }

  private async reload(file: string): Promise<void> {
    let exists = true;
    try {
      statSync(file);
    } catch {
      exists = false;
    }
    if (!exists) {
      if (this.byFile.delete(file)) {
        this.files = this.files.filter((f) => f !== file);
        this.index();
        this.options.log(`${this.shown(file)}: removed; its stubs no longer serve`);
      }
      return;
    }
    if (!this.files.includes(file)) this.files = [...this.files, file];
    const errors = await this.loadFile(file);
    if (errors === 0) {
      this.index();
      const n = this.byFile.get(file)?.length ?? 0;
      this.options.log(`${this.shown(file)}: reloaded, ${n} stub${n === 1 ? "" : "s"}`);
    }
  }

  close(): void {
    for (const w of this.watchers) w.close();
    for (const t of this.timers.values()) clearTimeout(t);
    this.watchers.length = 0;
  }
}
