// The running local listener, as every part of the extension sees it: its callback URL (to pre-fill a
// webhook's callback URL), a change event, and the self-signed certificate it serves (so a registry
// started in the editor can trust it). One handle per activation, on the context: the Deliveries part
// sets it when the listener starts or stops; the others only read it.
import * as vscode from "vscode";
import { ensureSelfSignedCert, type SelfSignedCert } from "../core/serve/self-signed";

/** The running listener. */
export interface ListenerInfo {
  /** Base URL, e.g. `https://127.0.0.1:8443`. */
  readonly url: string;
  /** The URL to register as a webhook's callback URL: `<url>/buf.alpha.webhook.v1alpha1.EventService/Event`. */
  readonly callbackUrl: string;
  readonly port: number;
  /** Whether it serves https. */
  readonly tls: boolean;
  /** PEM file of the certificate it serves (its own trust anchor: it is self-signed); undefined over http. */
  readonly certPath?: string;
  /** SHA-256 fingerprint of that certificate, colon-separated hex. */
  readonly fingerprint?: string;
}

export class ListenerHandle implements vscode.Disposable {
  private info: ListenerInfo | undefined;
  private cert: Promise<SelfSignedCert> | undefined;
  private readonly changed = new vscode.EventEmitter<void>();
  /** Fires when the listener starts or stops. */
  readonly onDidChange: vscode.Event<void> = this.changed.event;

  /** @param certDir where the listener's certificate is kept (the extension's global storage). */
  constructor(readonly certDir: string) {}

  /** The running listener, or undefined when it is stopped. */
  get current(): ListenerInfo | undefined {
    return this.info;
  }

  /** The running listener's callback URL, or undefined when it is stopped. */
  get callbackUrl(): string | undefined {
    return this.info?.callbackUrl;
  }

  /** Set by the Deliveries part when the listener starts (info) or stops (undefined). */
  set(info: ListenerInfo | undefined): void {
    this.info = info;
    this.changed.fire();
  }

  /**
   * The self-signed certificate the listener serves over https (generated on first call, then reused
   * from the extension's global storage, so it is the same before, during and after any listener run).
   * Trust its PEM (`cert`, or the file `certPath`) as a CA to call the listener over verified https.
   */
  certificate(): Promise<SelfSignedCert> {
    // One generation shared by every caller: two at once would otherwise each write a different pair.
    this.cert ??= ensureSelfSignedCert(this.certDir, "listener").catch((err: unknown) => {
      this.cert = undefined;
      throw err;
    });
    return this.cert;
  }

  dispose(): void {
    this.info = undefined;
    this.changed.dispose();
  }
}
