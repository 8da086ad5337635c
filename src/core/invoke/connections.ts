// Where a call gets its transports and resolvers. The pipeline asks for them by their settings
// objects; `protocall curl` and `protocall run` open them for the one call and close them after it
// (callConnections, here), and the editor's session keeps them warm across calls, keyed by the same
// settings (call-session.ts). Nothing else differs between the front ends' calls.
import type { Resolver } from "../schema/resolver";
import type { HeaderSplitter } from "./repeated-headers";
import { settingsKey } from "./settings-key";
import type { ConnectionSettings, SchemaSettings } from "./target";
import { type CurlTransport, createCurlTransport } from "./transport";
import type { VerboseLog } from "./verbose";

/** What a resolver is made from: the schema settings and how many fallback sources follow them. */
export interface ResolverSettings extends SchemaSettings {
  fallbackSources: number;
}

export interface CachedResolver {
  ready: Promise<Resolver>;
  /** Whether it was made for this call (rather than kept from an earlier one). */
  fresh: boolean;
  /** Forgets it and makes a new one (a kept schema may be out of date). */
  renew(): CachedResolver;
}

export interface Connections {
  /**
   * Whether what is opened belongs to this call alone. The transport's fast paths take over its
   * per-method slots (CurlTransport.tapResponses / tapRequests), which only a call that owns the
   * transport may do.
   */
  readonly exclusive: boolean;
  /** The transport for these settings; its verbose lines go to `log`. */
  transport(
    settings: ConnectionSettings,
    log: VerboseLog,
    splitHeader: HeaderSplitter,
  ): Promise<CurlTransport>;
  /**
   * The resolver for these settings, made by `open` when there is none (`via`: the connection its
   * reflection uses, when it reflects). `open` is given the log that what it opens writes to.
   */
  resolver(
    settings: ResolverSettings,
    via: ConnectionSettings | undefined,
    log: VerboseLog,
    open: (log: VerboseLog) => Promise<Resolver>,
  ): CachedResolver;
  /** The call is over (`failure`: what it failed with). */
  end(failure: unknown): Promise<void>;
}

/** Connections for one call: opened on demand (one per distinct settings), all closed at its end. */
export function callConnections(): Connections {
  const transports = new Map<string, Promise<CurlTransport>>();
  const resolvers: Promise<Resolver>[] = [];
  return {
    exclusive: true,
    transport(settings, log, splitHeader) {
      const key = settingsKey(settings);
      let t = transports.get(key);
      if (!t) {
        t = createCurlTransport({ ...settings, log, splitHeader });
        transports.set(key, t);
      }
      return t;
    },
    resolver(_settings, _via, log, open) {
      const ready = open(log);
      resolvers.push(ready);
      const once: CachedResolver = { ready, fresh: true, renew: () => once };
      return once;
    },
    async end() {
      for (const t of transports.values()) t.then((x) => x.close()).catch(() => {});
      await Promise.allSettled(resolvers.map((r) => r.then((x) => x.close())));
    },
  };
}
