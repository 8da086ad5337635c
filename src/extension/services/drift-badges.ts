// The Services view's drift badges: for each server source, its drift from the workspace's schemas
// (core/drift/server-drift.ts: the first of the view's other sources that declares a service the
// server serves), computed in the background when the view lists the server and kept until the view
// refreshes (a .proto change, Refresh). Nothing runs in a restricted workspace (it builds).
import * as vscode from "vscode";
import type { ServerDrift } from "../../core/drift/server-drift";
import { errorMessage } from "../../core/errors";
import type { ServiceServer, ServiceSourceInfo } from "../../server/protocol";
import { serverCurlOptions } from "../../server/services-server-source";
import type { ProtocallContext } from "../context";

export type DriftState =
  | { status: "pending" }
  | { status: "done"; drift: ServerDrift | undefined; text: string }
  | { status: "failed"; message: string };

export class DriftBadges {
  private readonly states = new Map<string, DriftState>();
  private generation = 0;

  constructor(
    private readonly ctx: ProtocallContext,
    /** Called when a badge is ready to show. */
    private readonly changed: () => void,
  ) {}

  /** The state of a server source, if its drift was asked for. */
  get(sourceId: string): DriftState | undefined {
    return this.states.get(sourceId);
  }

  /** Forgets every badge (the schemas may have changed); the next listing computes them again. */
  clear(): void {
    this.generation++;
    this.states.clear();
  }

  /** Starts computing a server's drift from `candidates` (the view's other sources), once per refresh. */
  ensure(source: ServiceSourceInfo, server: ServiceServer | undefined, candidates: readonly string[]): void {
    if (!server || source.error || !vscode.workspace.isTrusted || this.states.has(source.id)) return;
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    if (!folder) return;
    this.states.set(source.id, { status: "pending" });
    const generation = this.generation;
    void this.compute(server, candidates, folder).then((state) => {
      if (generation !== this.generation) return;
      this.states.set(source.id, state);
      this.changed();
    });
  }

  private async compute(
    server: ServiceServer,
    candidates: readonly string[],
    folder: string,
  ): Promise<DriftState> {
    try {
      const { serverDrift } = await import("../../core/drift/server-drift");
      const { formatDriftText } = await import("../../core/drift/report-text");
      const { Readable } = await import("node:stream");
      const connection = serverCurlOptions(server);
      // Registry modules among the candidates are read with the tokens of the registries signed in to.
      const access = await this.ctx.registryAccess().catch(() => ({ tokens: {}, cas: {} }));
      const drift = await serverDrift(connection.url as string, candidates, {
        cwd: folder,
        stdin: Readable.from([]),
        env: process.env,
        registryTokens: access.tokens,
        registryCas: access.cas,
        connection,
        timeoutMs: this.ctx.settings.reflectionTimeoutMs(),
      });
      return { status: "done", drift, text: drift ? formatDriftText(drift.report, folder) : "" };
    } catch (err) {
      this.ctx.log.warn(`Drift of ${server.url}: ${errorMessage(err)}`);
      return { status: "failed", message: errorMessage(err) };
    }
  }
}
