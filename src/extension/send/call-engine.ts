// The core's call session as the editor keeps it: created on the first send (the call engine, with
// Connect, HTTP/2 and TLS, loads then, not at activation), reused for every later send so connections
// and resolved schemas stay warm, and given the workspace build as its fallback schema source and the
// registries signed in to (Webhooks view) for `@schema REMOTE/owner/module`.
import type * as vscode from "vscode";
import type { CallSession, CallSessionOptions } from "../../core/invoke/call-session";
import type { ProtocallContext } from "../context";
import type { WorkspaceSources } from "./workspace-sources";

export class CallEngine implements vscode.Disposable {
  private current: CallSession | undefined;
  private loading: Promise<CallSession> | undefined;

  constructor(
    private readonly ctx: ProtocallContext,
    private readonly workspace: WorkspaceSources,
  ) {}

  /**
   * What every call session of the editor is made with: Send's, and the load test's (which makes its
   * own, one per connection), so both resolve a request against the same schemas.
   */
  sessionOptions(): CallSessionOptions {
    return {
      product: `protocall/${this.ctx.version}`,
      fallbackSources: () => this.workspace.sources(),
      reflectionTimeoutMs: () => this.ctx.settings.reflectionTimeoutMs(),
      registries: () => this.ctx.registryAccess(),
    };
  }

  /** The session, created on first use. */
  session(): Promise<CallSession> {
    this.loading ??= import("../../core/invoke/call-session").then(({ createCallSession }) => {
      this.current = createCallSession(this.sessionOptions());
      return this.current;
    });
    return this.loading;
  }

  /** Forgets connections and schemas (the next call dials and resolves again). */
  async refresh(): Promise<void> {
    this.workspace.invalidate();
    await this.current?.refresh();
  }

  dispose(): void {
    void this.current?.close();
  }
}
