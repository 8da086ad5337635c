// A running proxy with everything around it, as `protocall proxy` and the editor's Traffic view both
// run it: the durable call store, the decoding schema (the upstream's reflection, or the given
// sources, the first that knows a name), the pass-through server, and each completed call decoded,
// stored durably, then handed to the front end (which prints its line or refreshes its view).
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { ProtocallError } from "../errors";
import { openSchema } from "../schema/open-schema";
import { createReflectionSource } from "../schema/reflection-client";
import type { SchemaSource } from "../schema/types";
import { CallStore, type ProxiedCall } from "./call-store";
import { decodeCall } from "./decode-call";
import { startProxy } from "./proxy-server";

export interface ProxySessionOptions {
  readonly upstream: string;
  readonly host?: string;
  readonly port?: number;
  readonly tls?: { cert: string; key: string };
  /** Trust for an https upstream (PEM text), or no verification. */
  readonly ca?: string;
  readonly insecure?: boolean;
  /** Decode with these schema sources instead of the upstream's reflection. */
  readonly schemas?: readonly string[];
  /** Where relative --schema paths are read from, and stdin for `-`. */
  readonly cwd: string;
  readonly stdin?: NodeJS.ReadableStream;
  readonly env?: NodeJS.ProcessEnv;
  readonly storeFile: string;
  readonly maxStoreBytes?: number;
  /** Each call, once stored. */
  readonly onCall?: (call: ProxiedCall) => void;
  readonly onWarning?: (text: string) => void;
}

export interface ProxySession {
  readonly url: string;
  readonly upstream: string;
  readonly store: CallStore;
  /** Damaged stretches of the store skipped when it was opened (kept in `<store>.damaged`). */
  readonly damaged: number;
  close(): Promise<void>;
}

/** The first of the sources that knows a name. */
function firstOf(sources: SchemaSource[]): SchemaSource {
  return {
    label: sources.map((s) => s.label).join(", "),
    listServices: async () =>
      [...new Set((await Promise.all(sources.map((s) => s.listServices()))).flat())].sort(),
    async findType(name) {
      for (const s of sources) {
        const found = await s.findType(name);
        if (found) return found;
      }
      return undefined;
    },
    async findExtension(extendee, number) {
      for (const s of sources) {
        const found = await s.findExtension(extendee, number);
        if (found) return found;
      }
      return undefined;
    },
    close: async () => {
      await Promise.all(sources.map((s) => s.close()));
    },
  };
}

/** The schema calls are decoded with: the given sources, else the upstream's reflection. */
export async function openDecodingSchema(o: ProxySessionOptions): Promise<SchemaSource> {
  if (o.schemas && o.schemas.length > 0) {
    const sources = [];
    for (const spec of o.schemas)
      sources.push(await openSchema(spec, { cwd: o.cwd, stdin: o.stdin ?? process.stdin, env: o.env }));
    return firstOf(sources);
  }
  const transport = createGrpcTransport({
    baseUrl: o.upstream,
    nodeOptions: { ca: o.ca, rejectUnauthorized: !o.insecure },
  });
  return createReflectionSource({ transport, label: `reflection at ${o.upstream}`, timeoutMs: 10_000 });
}

export async function startProxySession(o: ProxySessionOptions): Promise<ProxySession> {
  mkdirSync(dirname(o.storeFile), { recursive: true });
  const store = await CallStore.open(o.storeFile, o.maxStoreBytes).catch((e) => {
    throw new ProtocallError(`cannot open the call store ${o.storeFile}: ${(e as Error).message}`);
  });
  let schema: SchemaSource | undefined;
  try {
    schema = await openDecodingSchema(o);
    const decoding = schema;
    const proxy = await startProxy({
      upstream: o.upstream,
      port: o.port,
      host: o.host,
      tls: o.tls,
      ca: o.ca,
      insecure: o.insecure,
      onWarning: o.onWarning,
      async onCall(observed) {
        const decoded = await decodeCall(observed, decoding);
        const call: ProxiedCall = { id: store.allocateId(), ...observed, decoded };
        await store.add(call);
        o.onCall?.(call);
      },
    }).catch((e) => {
      throw new ProtocallError(
        `cannot listen on ${o.host ?? "127.0.0.1"}:${o.port ?? 0}: ${(e as Error).message}`,
      );
    });
    return {
      url: proxy.url,
      upstream: o.upstream,
      store,
      damaged: store.damaged,
      async close() {
        await proxy.close();
        await decoding.close();
        await store.close();
      },
    };
  } catch (e) {
    await schema?.close();
    await store.close();
    throw e;
  }
}
