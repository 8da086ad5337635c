// The running local listener, as other parts of the extension see it: its callback URL (to pre-fill a
// webhook's callback URL), a change event, and the self-signed certificate it serves (so a registry
// started in the editor can trust it). The Deliveries part sets this state; everyone else only reads it.
import * as vscode from "vscode";
import { ensureSelfSignedCert, type SelfSignedCert } from "../../core/webhooks/self-signed";

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

let current: ListenerInfo | undefined;
let certDir: string | undefined;
let cert: Promise<SelfSignedCert> | undefined;
const changed = new vscode.EventEmitter<void>();

/** Fires when the listener starts or stops. */
export const onDidChangeListener: vscode.Event<void> = changed.event;

/** The running listener's callback URL, or undefined when it is stopped. */
export function currentListenerUrl(): string | undefined {
  return current?.callbackUrl;
}

/** The running listener, or undefined when it is stopped. */
export function currentListener(): ListenerInfo | undefined {
  return current;
}

/**
 * The self-signed certificate the listener serves over https (generated on first call, then reused from
 * the extension's global storage, so it is the same before, during and after any listener run). Trust
 * its PEM (`cert`, or the file `certPath`) as a CA to call the listener over verified https.
 */
export async function listenerCertificate(): Promise<SelfSignedCert> {
  if (!certDir) throw new Error("the Protocall extension is not activated yet");
  // One generation shared by every caller: two at once would otherwise each write a different pair.
  cert ??= ensureSelfSignedCert(certDir, "listener").catch((err: unknown) => {
    cert = undefined;
    throw err;
  });
  return cert;
}

/** Set by the Deliveries part at activation: where the listener's certificate is kept. */
export function setListenerCertificateDir(dir: string): void {
  certDir = dir;
  cert = undefined;
}

/** Set by the Deliveries part when the listener starts (info) or stops (undefined). */
export function setCurrentListener(info: ListenerInfo | undefined): void {
  current = info;
  changed.fire();
}
