// Combined resolution over an ordered list of schema sources: the first source that defines an element
// wins; the well-known types are always consulted last. Failures say which sources were tried, why
// each failed, and suggest close names.
import {
  createRegistry,
  type DescEnum,
  type DescExtension,
  type DescFile,
  type DescMessage,
  type DescMethod,
  type DescService,
  type Registry,
} from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { closest } from "../closest";
import { errorMessage, ProtocallError } from "../errors";
import type { SchemaSource } from "./types";
import { createWellKnownSource, mayBeWellKnown, wellKnownRegistry, withWellKnownTypes } from "./wkt-source";

type Found = DescService | DescMessage | DescEnum | DescExtension;

export interface Resolver {
  /** The sources in the order they are asked, the well-known types last. */
  readonly sources: readonly SchemaSource[];
  /** Sorted union of the services of every source that can list them. */
  listServices(): Promise<string[]>;
  findService(name: string): Promise<DescService>;
  findMethod(service: string, method: string): Promise<DescMethod>;
  findMessage(name: string): Promise<DescMessage>;
  findEnum(name: string): Promise<DescEnum>;
  /** The extension of `extendee` with that field number; undefined when no source has it. */
  findExtension(extendee: string, number: number): Promise<DescExtension | undefined>;
  /**
   * A registry with the given types (and the files that declare them) plus the well-known types, for
   * JSON of google.protobuf.Any and error details. Types no source knows are simply absent. `files`
   * are added last (they win over the types found), as `createRegistry(registry, ...files)` would,
   * without listing the well-known types (which are built only when one is looked up).
   */
  registry(typeNames: string[], ...files: DescFile[]): Promise<Registry>;
  close(): Promise<void>;
}

function isWellKnownSource(source: SchemaSource): boolean {
  return (source as { wellKnown?: boolean }).wellKnown === true;
}

/** Creates a resolver over the sources, asked in the given order; the well-known types come last. */
export function createResolver(sources: SchemaSource[]): Resolver {
  const ordered = sources.filter((s) => !isWellKnownSource(s));
  ordered.push(sources.find(isWellKnownSource) ?? createWellKnownSource());
  const typeCache = new Map<string, Promise<Lookup>>();
  let closed: Promise<void> | undefined;

  const lookupType = (fullName: string, accept: (d: Found) => boolean, kind: string): Promise<Lookup> => {
    const name = fullName.startsWith(".") ? fullName.slice(1) : fullName; // `.pkg.Type` as in descriptors
    const key = `${kind}:${name}`;
    let cached = typeCache.get(key);
    if (!cached) {
      cached = (async () => {
        const misses: string[] = [];
        const errors: unknown[] = [];
        for (const [i, source] of ordered.entries()) {
          try {
            const found = await source.findType(name);
            if (found && accept(found)) return { found, foundBy: i, misses, errors };
            misses.push(
              `${source.label}: ${found ? `"${name}" is ${article(describeKind(found))}, not ${article(kind)}` : "not defined there"}`,
            );
          } catch (err) {
            errors.push(err);
            misses.push(describeFailure(source, err));
          }
        }
        return { misses, errors };
      })();
      typeCache.set(key, cached);
      // A miss caused by a source failure (network, timeout) should not stick: the next call asks again.
      cached
        .then((r) => !r.found && r.errors.length > 0 && typeCache.delete(key))
        .catch(() => typeCache.delete(key));
    }
    return cached;
  };

  const findService = async (name: string): Promise<DescService> => {
    const lookup = await lookupType(name, (d) => d.kind === "service", "service");
    if (lookup.found) return lookup.found as DescService;
    throw lookupFailure(ordered, lookup, `service "${name}"`, closest(name, await knownServices(ordered)));
  };

  const resolver: Resolver = {
    sources: ordered,
    listServices: () => listAllServices(ordered),
    findService,
    async findMethod(serviceName: string, methodName: string) {
      const lookup = await lookupType(serviceName, (d) => d.kind === "service", "service");
      if (!lookup.found) {
        throw lookupFailure(
          ordered,
          lookup,
          `service "${serviceName}"`,
          closest(serviceName, await knownServices(ordered)),
        );
      }
      const first = lookup.found as DescService;
      const method = first.methods.find((m) => m.name === methodName);
      if (method) return method;
      // A later source may define the same service with that method.
      const foundBy = lookup.foundBy ?? 0;
      const misses = [`${ordered[foundBy].label}: service "${serviceName}" has no method "${methodName}"`];
      for (const source of ordered.slice(foundBy + 1)) {
        try {
          const other = await source.findType(serviceName);
          const m = other?.kind === "service" ? other.methods.find((x) => x.name === methodName) : undefined;
          if (m) return m;
        } catch {
          // already reported for the service; the error below names the method
        }
      }
      const names = first.methods.map((m) => m.name);
      const hint = closest(methodName, names);
      const list = names.length > 0 ? ` Its methods: ${names.join(", ")}.` : "";
      throw new ProtocallError(
        `method "${serviceName}/${methodName}" not found: ${misses.join("; ")}.` +
          (hint.length > 0 ? ` Did you mean ${hint.map((h) => `"${h}"`).join(" or ")}?` : list),
      );
    },
    async findMessage(name: string) {
      const lookup = await lookupType(name, (d) => d.kind === "message", "message");
      if (lookup.found) return lookup.found as DescMessage;
      throw lookupFailure(ordered, lookup, `message "${name}"`, []);
    },
    async findEnum(name: string) {
      const lookup = await lookupType(name, (d) => d.kind === "enum", "enum");
      if (lookup.found) return lookup.found as DescEnum;
      throw lookupFailure(ordered, lookup, `enum "${name}"`, []);
    },
    async findExtension(extendee: string, number: number) {
      for (const source of ordered) {
        try {
          const ext = await source.findExtension(extendee, number);
          if (ext) return ext;
        } catch {
          // an extension is optional information; try the next source
        }
      }
      return undefined;
    },
    async registry(typeNames: string[], ...extra: DescFile[]) {
      const files = new Set<DescFile>();
      const types: Found[] = [];
      for (const name of new Set(typeNames)) {
        if (mayBeWellKnown(name) && wellKnownRegistry().get(name)) continue;
        const lookup = await lookupType(name, (d) => d.kind !== "service", "type");
        if (lookup.found) {
          types.push(lookup.found);
          files.add(lookup.found.file);
        }
      }
      // Whole files, so that messages nested in the detail (or packed in an Any inside it) resolve too.
      // The well-known types behind them, built only if asked for.
      return withWellKnownTypes(createRegistry(...files, ...types, ...extra));
    },
    close() {
      if (!closed) {
        closed = Promise.allSettled(ordered.map((s) => s.close())).then(() => undefined);
      }
      return closed;
    },
  };

  return resolver;
}

/** A type looked up in the sources, in order. */
interface Lookup {
  found?: Found;
  /** Index in `ordered` of the source that defined it. */
  foundBy?: number;
  /** One line per source that did not have it: `label: reason`. */
  misses: string[];
  /** Errors thrown by sources (unreachable, unreadable), in order. */
  errors: unknown[];
}

/** Service names from every source that can list them; failures are ignored here. */
async function knownServices(ordered: SchemaSource[]): Promise<string[]> {
  const names = new Set<string>();
  for (const source of ordered) {
    try {
      for (const name of await source.listServices()) names.add(name);
    } catch {
      // a source that cannot list simply contributes nothing to suggestions
    }
  }
  return [...names];
}

/**
 * The error for a type no source had: each source's reason, or, when every source failed to answer
 * (an unreachable server, for instance), that, with the RPC code of the first failure.
 */
function lookupFailure(ordered: SchemaSource[], lookup: Lookup, what: string, suggestions: string[]): Error {
  const hint =
    suggestions.length > 0 ? ` Did you mean ${suggestions.map((s) => `"${s}"`).join(" or ")}?` : "";
  const realSources = ordered.length - 1;
  const first = lookup.errors[0];
  if (realSources > 0 && lookup.errors.length === realSources) {
    const message = `cannot look up ${what}: ${lookup.misses.slice(0, realSources).join("; ")}`;
    if (first instanceof ConnectError)
      return new ConnectError(message, first.code, first.metadata, undefined, first);
    return new ProtocallError(message);
  }
  return new ProtocallError(`${what} not found. Tried ${lookup.misses.join("; ")}.${hint}`);
}

/** Every service the sources list (the well-known types aside); an error when none could list. */
async function listAllServices(ordered: SchemaSource[]): Promise<string[]> {
  const names = new Set<string>();
  const problems: string[] = [];
  let listed = 0;
  let firstError: unknown;
  for (const source of ordered) {
    if (isWellKnownSource(source)) continue;
    try {
      for (const name of await source.listServices()) names.add(name);
      listed++;
    } catch (err) {
      problems.push(describeFailure(source, err));
      if (firstError === undefined) firstError = err;
    }
  }
  if (listed === 0) {
    if (problems.length === 0) {
      throw new ProtocallError(
        "no schema to list services from: use server reflection or give a schema (--schema)",
      );
    }
    const message = `cannot list services: ${problems.join("; ")}`;
    if (problems.length === 1 && firstError instanceof ConnectError) {
      throw new ConnectError(message, firstError.code, firstError.metadata, undefined, firstError);
    }
    throw new ProtocallError(message);
  }
  return [...names].sort();
}

/** `label: reason`, without repeating the label when the reason already starts with it. */
function describeFailure(source: SchemaSource, err: unknown): string {
  const message = err instanceof ConnectError ? err.rawMessage : errorMessage(err);
  return message.startsWith(source.label) ? message : `${source.label}: ${message}`;
}

function article(noun: string): string {
  return /^[aeiou]/.test(noun) ? `an ${noun}` : `a ${noun}`;
}

function describeKind(desc: Found): string {
  switch (desc.kind) {
    case "service":
      return "service";
    case "message":
      return "message";
    case "enum":
      return "enum";
    case "extension":
      return "extension";
  }
}
