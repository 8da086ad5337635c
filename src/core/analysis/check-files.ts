// The language server's diagnostics for .rpc files on disk, without an editor: what `protocall check`
// prints. The same Analyzer, SchemaStore and computeDiagnostics the server runs for an open document
// (diagnostics.ts), so a file gets exactly the diagnostics the editor shows for it with the same
// settings; only the workspace folders are chosen here (there is no editor to say which are open).
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Diagnostic } from "vscode-languageserver-protocol";
import { TextDocument } from "vscode-languageserver-textdocument";
import { errorMessage } from "../errors";
import { findWorkspaceRoot } from "../rpcfile/environment";
import { Analyzer } from "./analysis";
import { computeDiagnostics } from "./diagnostics";
import { SchemaStore } from "./schema-store";
import type { ServerSettings } from "./settings";

export interface FileDiagnostics {
  /** Absolute path. */
  path: string;
  diagnostics: Diagnostic[];
  /** The file could not be read. */
  problem?: string;
  /**
   * Requests for which no schema was found (no source at all: no --schema, build, descriptor set,
   * `# @schema` or reflection): their methods, bodies and assertions were not checked.
   */
  schemaless: { range: Diagnostic["range"]; service: string }[];
}

export interface CheckedFiles {
  files: FileDiagnostics[];
  /** What was tried for the schema: each workspace source, as `what: how it went`. */
  tried: string[];
}

export interface CheckFilesOptions {
  settings: ServerSettings;
  /** The workspace folders whose .proto files are built; default: workspaceFolderOf each file. */
  folders?: string[];
  /** The server's log lines (builds, reflection), for a verbose mode. */
  log?: (line: string) => void;
}

/**
 * The folder an editor would have open for a request file: the nearest directory above it with a
 * buf.work.yaml or buf.yaml (the module its requests are about), else its workspace root (the
 * nearest with protocall.env.json or .git, where environments are read), else its own directory.
 */
export function workspaceFolderOf(rpcFile: string, exists: (path: string) => boolean): string {
  for (const marker of ["buf.work.yaml", "buf.yaml"]) {
    for (let dir = dirname(rpcFile); ; dir = dirname(dir)) {
      if (exists(join(dir, marker))) return dir;
      if (dirname(dir) === dir) break;
    }
  }
  return findWorkspaceRoot(rpcFile, exists);
}

/**
 * Diagnostics of each file, in the order given, and the requests no schema was found for. Never
 * throws for a file that cannot be read.
 */
export async function checkFiles(paths: readonly string[], o: CheckFilesOptions): Promise<CheckedFiles> {
  const store = new SchemaStore(o.settings, o.log ?? (() => {}));
  const analyzer = new Analyzer(store);
  store.setFolders(o.folders ?? []);
  try {
    // Files are checked together, so a schema (or a build) is opened once for all of them.
    const files = await Promise.all(
      paths.map(async (path): Promise<FileDiagnostics> => {
        let text: string;
        try {
          text = readFileSync(path, "utf8");
        } catch (err) {
          return { path, diagnostics: [], problem: errorMessage(err), schemaless: [] };
        }
        const doc = TextDocument.create(pathToFileURL(path).href, "rpc", 1, text);
        const diagnostics = await computeDiagnostics(analyzer, store, doc, { prefetchDocs: false });
        const infos = await Promise.all(analyzer.get(doc).file.requests.map((r) => analyzer.request(doc, r)));
        const schemaless = infos.flatMap((info) =>
          info.serviceName && info.request.url && info.schema?.sources.length === 0
            ? [{ range: info.request.url.range, service: info.serviceName }]
            : [],
        );
        return { path, diagnostics, schemaless };
      }),
    );
    const tried = (await store.workspaceSources()).map(
      (s) =>
        `${s.kind === "setting" ? "--schema" : s.kind === "workspace-build" ? "build of" : "descriptor set"} ${s.origin}: ${s.problem ?? "opened"}`,
    );
    return { files, tried };
  } finally {
    store.invalidate(true);
  }
}
