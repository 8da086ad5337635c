// The local listener as an editor runs it: one event store file and, while started, one listener
// serving it (https with a self-signed certificate kept in a directory of the caller's choosing).
// Keeps the newest deliveries in memory for display, tells subscribers when the listener starts or
// stops and when deliveries arrive, and replays, clears and sends test pushes. No editor API here.
import { existsSync } from "node:fs";
import type { JsonValue } from "@bufbuild/protobuf";
import { errorMessage, ProtocallError } from "../errors";
import { chooseProxy } from "../invoke/proxy-choice";
import { ensureSelfSignedCert, type SelfSignedCert } from "../serve/self-signed";
import type { PostResult } from "./http-post";
import { type Listener, startListener } from "./listener";
import { replayDelivery } from "./replay";
import { sendTestEvent, testEventFromJson } from "./send-test";
import { describeRecovery, EventStore, readStore, type StoredDelivery } from "./store";

export interface ListenerSessionOptions {
  /** The event store file (created when missing). */
  readonly storeFile: string;
  /** Where the self-signed certificate `listener-cert.pem` / `listener-key.pem` is kept. */
  readonly certDir: string;
  /** Most deliveries kept in memory for display (default 1000); the store keeps them all. */
  readonly keep?: number;
  /**
   * Gives the certificate to serve (default: `ensureSelfSignedCert(certDir, "listener")`). A front end
   * that also hands the certificate to others passes its own, so that all share one generation.
   */
  readonly certificate?: () => Promise<SelfSignedCert>;
  /**
   * The environment forwards choose their proxy from (HTTPS_PROXY, NO_PROXY, ...; the editor's
   * `http.proxy` applied), read when the listener starts; absent: forwards go direct.
   */
  readonly env?: () => NodeJS.ProcessEnv;
}

/** How to run the listener (the editor's `protocall.listener.*` settings). */
export interface ListenerSettings {
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** Default 0: any free port. */
  readonly port?: number;
  /** Serve https with the self-signed certificate (default true). */
  readonly tls?: boolean;
  /** Relay each accepted event to this URL; empty: none. */
  readonly forwardTo?: string;
  /** Size limit of the store file; the oldest deliveries are pruned past it. */
  readonly maxStoreBytes?: number;
}

export interface RunningListener {
  /** Base URL, e.g. `https://127.0.0.1:8443`. */
  readonly url: string;
  /** The URL to register as a webhook's callback URL. */
  readonly callbackUrl: string;
  readonly host: string;
  readonly port: number;
  readonly tls: boolean;
  /** The self-signed certificate served over https (PEM file), and its SHA-256 fingerprint. */
  readonly certPath?: string;
  readonly fingerprint?: string;
  readonly forwardTo?: string;
  readonly storeFile: string;
  /** Set when the store was damaged on disk: what was skipped on opening it (one line). */
  readonly storeWarning?: string;
}

/** The result of a replay or a test push. */
export interface SendOutcome {
  readonly to: string;
  readonly status: number;
  readonly latencyMs: number;
  /** The response body as text (at most 4 KiB). */
  readonly body: string;
}

export type SessionChange = "listener" | "deliveries";

const MIB = 1024 * 1024;

/** Checks the settings; each problem names its setting and how to fix it. */
export function checkListenerSettings(s: ListenerSettings): void {
  if (s.host !== undefined && s.host.trim() === "") {
    throw new ProtocallError("protocall.listener.host is empty: set an address such as 127.0.0.1");
  }
  if (s.port !== undefined && (!Number.isInteger(s.port) || s.port < 0 || s.port > 65535)) {
    throw new ProtocallError(
      `protocall.listener.port is ${s.port}: use a whole number from 1 to 65535, or 0 for any free port`,
    );
  }
  if (s.forwardTo) {
    let ok = false;
    try {
      const u = new URL(s.forwardTo);
      ok = u.protocol === "http:" || u.protocol === "https:";
    } catch {
      ok = false;
    }
    if (!ok) {
      throw new ProtocallError(
        `protocall.listener.forwardTo "${s.forwardTo}" is not an http(s) URL: fix it, or clear it to forward nothing`,
      );
    }
  }
  if (s.maxStoreBytes !== undefined && (!Number.isFinite(s.maxStoreBytes) || s.maxStoreBytes < MIB)) {
    throw new ProtocallError(
      `protocall.listener.maxStoreBytes is ${s.maxStoreBytes}: use at least ${MIB} (1 MiB)`,
    );
  }
}

function roundMs(ms: number): number {
  return Math.round(ms * 10) / 10;
}

function outcome(to: string, res: PostResult): SendOutcome {
  return { to, status: res.status, latencyMs: roundMs(res.latencyMs), body: res.body.toString("utf8") };
}

export class ListenerSession {
  private store: EventStore | undefined;
  private listener: Listener | undefined;
  private info: RunningListener | undefined;
  private certPem: string | undefined;
  /** The newest deliveries, oldest first. */
  private recent: StoredDelivery[] = [];
  private total = 0;
  private readonly keep: number;
  private readonly subscribers = new Set<(change: SessionChange) => void>();
  /** Start, stop and clear run one at a time, in call order. */
  private queue: Promise<unknown> = Promise.resolve();
  private warning: string | undefined;

  constructor(private readonly options: ListenerSessionOptions) {
    this.keep = options.keep ?? 1000;
  }

  private certificate(): Promise<SelfSignedCert> {
    return this.options.certificate?.() ?? ensureSelfSignedCert(this.options.certDir, "listener");
  }

  /** Subscribes to changes; returns the function that unsubscribes. */
  onDidChange(callback: (change: SessionChange) => void): () => void {
    this.subscribers.add(callback);
    return () => this.subscribers.delete(callback);
  }

  /** The running listener, or undefined. */
  get running(): RunningListener | undefined {
    return this.info;
  }

  get storeFile(): string {
    return this.options.storeFile;
  }

  /** Number of deliveries in the store. */
  count(): number {
    return this.total;
  }

  /**
   * What reading or opening the store last had to skip because the file was damaged (one line), or
   * undefined when it was intact.
   */
  get storeWarning(): string | undefined {
    return this.warning;
  }

  /** The newest deliveries (at most `keep`), newest first. */
  deliveries(): StoredDelivery[] {
    return this.recent.slice().reverse();
  }

  /** Reads the store file (when the listener is not running) to show what earlier runs received. */
  load(): Promise<void> {
    return this.serial(async () => {
      if (this.store) return;
      let all: StoredDelivery[] = [];
      if (existsSync(this.options.storeFile)) {
        const contents = readStore(this.options.storeFile);
        all = contents.deliveries;
        this.warning = describeRecovery(contents.recovery);
      }
      this.total = all.length;
      this.recent = all.slice(-this.keep);
      this.emit("deliveries");
    });
  }

  /** Starts the listener (or returns the running one). */
  start(settings: ListenerSettings = {}): Promise<RunningListener> {
    return this.serial(async () => {
      if (this.info) return this.info;
      checkListenerSettings(settings);
      const host = settings.host?.trim() || "127.0.0.1";
      const tlsOn = settings.tls ?? true;
      let tls: { cert: string; key: string } | undefined;
      let certPath: string | undefined;
      let fingerprint: string | undefined;
      if (tlsOn) {
        const cert = await this.certificate();
        tls = { cert: cert.cert, key: cert.key };
        certPath = cert.certPath;
        fingerprint = cert.fingerprint;
        this.certPem = cert.cert;
      }
      let store: EventStore;
      try {
        store = await EventStore.open(this.options.storeFile, { maxBytes: settings.maxStoreBytes });
      } catch (err) {
        const owner = /in use by process (\d+)/.exec(errorMessage(err));
        if (owner) {
          throw new ProtocallError(
            `cannot start the listener: its store ${this.options.storeFile} is in use by process ${owner[1]} (another window of this workspace, or \`protocall listen\`): stop the listener there first`,
          );
        }
        throw new ProtocallError(`cannot start the listener: ${errorMessage(err)}`);
      }
      let listener: Listener;
      try {
        listener = await startListener({
          store,
          host,
          port: settings.port ?? 0,
          tls,
          forwardTo: settings.forwardTo || undefined,
          forwardProxy:
            settings.forwardTo && this.options.env
              ? chooseProxy(new URL(settings.forwardTo), undefined, this.options.env())
              : undefined,
          onDelivery: (d) => this.received(d),
          onForward: (id, forward) => {
            const i = this.recent.findIndex((d) => d.id === id);
            if (i >= 0) this.recent[i] = { ...this.recent[i], forward };
            this.emit("deliveries");
          },
        });
      } catch (err) {
        await store.close();
        const code = (err as NodeJS.ErrnoException).code;
        const where = `${host}:${settings.port ?? 0}`;
        if (code === "EADDRINUSE") {
          throw new ProtocallError(
            `cannot start the listener on ${where}: the port is in use; set protocall.listener.port to another port, or 0 for any free port`,
          );
        }
        if (code === "EADDRNOTAVAIL" || code === "ENOTFOUND") {
          throw new ProtocallError(
            `cannot start the listener on ${where}: no such local address; set protocall.listener.host to 127.0.0.1`,
          );
        }
        throw new ProtocallError(`cannot start the listener on ${where}: ${errorMessage(err)}`);
      }
      this.store = store;
      this.listener = listener;
      this.warning = describeRecovery(store.recovery);
      const all = await store.list();
      this.total = all.length;
      this.recent = all.slice(-this.keep);
      // A listener bound to every address is still called on the loopback address.
      const loopback = (u: string) => u.replace(/^(https?:\/\/)(0\.0\.0\.0|\[::\])(?=:)/, "$1127.0.0.1");
      this.info = {
        url: loopback(listener.url),
        callbackUrl: loopback(listener.callbackUrl),
        host,
        port: listener.port,
        tls: tlsOn,
        ...(certPath ? { certPath, fingerprint } : {}),
        ...(settings.forwardTo ? { forwardTo: settings.forwardTo } : {}),
        storeFile: this.options.storeFile,
        ...(this.warning ? { storeWarning: this.warning } : {}),
      };
      this.emit("listener");
      this.emit("deliveries");
      return this.info;
    });
  }

  /** Stops the listener; the deliveries stay in the store and on display. */
  stop(): Promise<void> {
    return this.serial(async () => {
      const listener = this.listener;
      const store = this.store;
      if (!listener || !store) return;
      this.listener = undefined;
      this.info = undefined;
      try {
        await listener.close();
      } finally {
        this.store = undefined;
        await store.close();
        this.emit("listener");
      }
    });
  }

  /** A delivery by id (from memory, else from the store). */
  async get(id: number): Promise<StoredDelivery | undefined> {
    const hit = this.recent.find((d) => d.id === id);
    if (hit) return hit;
    return (await this.all()).find((d) => d.id === id);
  }

  /** Every delivery in the store, oldest first. */
  async all(): Promise<StoredDelivery[]> {
    if (this.store) return this.store.list();
    return existsSync(this.options.storeFile) ? readStore(this.options.storeFile).deliveries : [];
  }

  /** Removes every delivery from the store (running or not). */
  clear(): Promise<void> {
    return this.serial(async () => {
      if (this.store) {
        await this.store.clear();
      } else if (existsSync(this.options.storeFile)) {
        const store = await EventStore.open(this.options.storeFile);
        try {
          await store.clear();
        } finally {
          await store.close();
        }
      }
      this.recent = [];
      this.total = 0;
      this.warning = undefined;
      this.emit("deliveries");
    });
  }

  /** PEM to trust when calling the listener over https (its self-signed certificate). */
  async trustedCa(to?: string): Promise<string | undefined> {
    if (to !== undefined && !to.startsWith("https:")) return undefined;
    if (!this.certPem) {
      const cert = await this.certificate();
      this.certPem = cert.cert;
    }
    return this.certPem;
  }

  /** Sends delivery `id` again, byte for byte, to `to`; network failures are ProtocallErrors. */
  async replay(id: number, to: string): Promise<SendOutcome> {
    const delivery = await this.get(id);
    if (!delivery) throw new ProtocallError(`no delivery #${id} in the store: it was cleared or pruned`);
    checkTarget(to);
    try {
      return outcome(
        to,
        await replayDelivery(delivery, to, { ca: await this.trustedCa(to), timeoutMs: 30_000 }),
      );
    } catch (err) {
      throw new ProtocallError(`cannot replay delivery #${id} to ${to}: ${errorMessage(err)}`);
    }
  }

  /**
   * Sends a synthetic push (or `event`, an EventRequest as protobuf JSON) to `to`, by default the
   * running listener's callback URL.
   */
  async sendTest(event?: JsonValue, to?: string): Promise<SendOutcome> {
    const target = to ?? this.info?.callbackUrl;
    if (!target) throw new ProtocallError("the listener is not running: start it, or give a URL to send to");
    checkTarget(target);
    const message = event === undefined ? undefined : testEventFromJson(event);
    try {
      return outcome(
        target,
        await sendTestEvent(target, message, { ca: await this.trustedCa(to), timeoutMs: 30_000 }),
      );
    } catch (err) {
      throw new ProtocallError(`cannot send the test push to ${target}: ${errorMessage(err)}`);
    }
  }

  /** Stops the listener and drops subscribers. */
  async dispose(): Promise<void> {
    await this.stop();
    this.subscribers.clear();
  }

  private received(d: StoredDelivery): void {
    this.recent.push(d);
    if (this.recent.length > this.keep) this.recent.splice(0, this.recent.length - this.keep);
    this.total = this.store?.count() ?? this.total + 1;
    this.emit("deliveries");
  }

  private emit(change: SessionChange): void {
    for (const s of this.subscribers) {
      try {
        s(change);
      } catch {
        // A subscriber's failure is its own.
      }
    }
  }

  private serial<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task, task);
    this.queue = run.catch(() => undefined);
    return run;
  }
}

/** A send target must be an http(s) URL. */
function checkTarget(to: string): void {
  let u: URL;
  try {
    u = new URL(to);
  } catch {
    throw new ProtocallError(`"${to}" is not a URL: give an http:// or https:// URL`);
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") {
    throw new ProtocallError(`"${to}" is not an http(s) URL: give an http:// or https:// URL`);
  }
}
