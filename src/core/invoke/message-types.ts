// The types a call's messages need beyond the method's own: google.protobuf.Any values (in request
// JSON by their "@type", in responses by their type URL, including Any types packed inside types
// found this way) and extension fields of responses, all resolved through the call's schema as they
// are met. Everything is synchronous until a message names a type not loaded yet, so a long stream
// of plain messages never pays for a promise per message.
import {
  type DescExtension,
  type DescMessage,
  type DescMethod,
  type JsonValue,
  type Message,
  type Registry,
  toJson,
} from "@bufbuild/protobuf";
import type { Resolver } from "../schema/resolver";
import { collectAnyTypeNames, createMessageFormatter, reachesAny } from "./output";
import { findUnknownFields, reachesExtendable, unknownFieldSize } from "./unknown-fields";
import type { VerboseLog } from "./verbose";

/** The Any types of one method's requests and responses, loaded as they are met. */
interface MethodTypes {
  /** Resolves Any types in responses. */
  any: Registry;
  /** Resolves Any types in requests (and the method's own file). */
  request: Registry;
  anyNames: Set<string>;
  requestNames: Set<string>;
}

// Per method (a method belongs to one resolver), so a warm resolver loads each type once.
const methodTypes = new WeakMap<DescMethod, Promise<MethodTypes>>();

function typesOf(res: Resolver, method: DescMethod): Promise<MethodTypes> {
  let t = methodTypes.get(method);
  if (!t) {
    // The method's file on top of the base, without listing (building) the well-known types.
    t = Promise.all([res.registry([]), res.registry([], method.parent.file)]).then(([base, request]) => ({
      any: base,
      request,
      anyNames: new Set<string>(),
      requestNames: new Set<string>(),
    }));
    methodTypes.set(method, t);
  }
  return t;
}

export interface MessageTypes {
  /** The registry for Any types in request JSON (asked for each request, as it grows). */
  requestRegistry(): Registry;
  /** Loads the types named by "@type" keys of one request document; undefined when none is new. */
  loadRequestTypes(json: unknown): Promise<void> | undefined;
  /** Whether request documents can hold an Any (else loadRequestTypes need not be called). */
  readonly requestsMayHoldAny: boolean;
  /** Whether responses can hold an Any (then they must be prepared before they are formatted). */
  readonly responsesMayHoldAny: boolean;
  /**
   * Loads what a response needs before it is formatted (Any types, extensions); undefined when
   * nothing is missing. With a verbose log, reports bytes of fields the schema does not declare.
   */
  prepareResponse(message: Message): Promise<void> | undefined;
  /** Formats a (prepared) response message as `protocall curl` prints it, without the newline. */
  formatResponse(message: Message): string;
  /**
   * A (prepared) response message as proto JSON with every field without presence at its default
   * (`"count": 0` rather than nothing): what assertions and captures read (core/assertions).
   */
  responseValue(message: Message): JsonValue;
}

export async function messageTypes(
  res: Resolver,
  method: DescMethod,
  o: { emitDefaults: boolean; log: VerboseLog },
): Promise<MessageTypes> {
  const t = await typesOf(res, method);
  const output = method.output;
  const log = o.log;
  const responsesMayHoldAny = reachesAny(output);
  // Extensions print as "[pkg.ext]" once a source defines them; other undeclared fields are
  // dropped, and verbose mode reports their size. Only scanned when that can matter.
  const extensions = new Map<string, DescExtension | null>();
  const scanUnknown = log.enabled || reachesExtendable(output);
  const lookup = (name: string) => t.any.getMessage(name);

  const freshAnyNames = (message: Message): string[] =>
    [...collectAnyTypeNames(output, message, lookup)].filter((n) => !t.anyNames.has(n));
  const loadAny = (message: Message): Promise<void> | undefined => {
    const first = freshAnyNames(message);
    if (first.length === 0) return undefined;
    return (async () => {
      // Until no new name turns up: a type found now may pack further Any values.
      for (let fresh = first; fresh.length > 0; fresh = freshAnyNames(message)) {
        for (const n of fresh) t.anyNames.add(n);
        t.any = await res.registry([...t.anyNames]);
      }
    })();
  };

  const prepareUnknown = (message: Message): Promise<void> | undefined => {
    const found = findUnknownFields(output, message);
    if (found.length === 0) return undefined;
    const report = () => {
      if (!log.enabled) return;
      let dropped = 0;
      for (const { extendee, field } of found) {
        if (!extensions.get(`${extendee.typeName}:${field.no}`)) dropped += unknownFieldSize(field);
      }
      if (dropped > 0) {
        log.line(`Response message (${output.typeName}) contained ${dropped} bytes of unrecognized fields.`);
      }
    };
    const missing = found.filter(
      ({ extendee, field }) => !extensions.has(`${extendee.typeName}:${field.no}`),
    );
    if (missing.length === 0) return void report();
    return (async () => {
      for (const { extendee, field } of missing) {
        const key = `${extendee.typeName}:${field.no}`;
        if (extensions.has(key)) continue;
        extensions.set(key, (await res.findExtension(extendee.typeName, field.no)) ?? null);
      }
      report();
    })();
  };

  const formatter = createMessageFormatter({
    emitDefaults: o.emitDefaults,
    resolveAny: lookup,
    resolveExtension: (d: DescMessage, no: number) => extensions.get(`${d.typeName}:${no}`) ?? undefined,
  });

  return {
    requestsMayHoldAny: reachesAny(method.input),
    responsesMayHoldAny,
    requestRegistry: () => t.request,
    loadRequestTypes(json) {
      const names = collectJsonTypeNames(json);
      if (names.every((n) => t.requestNames.has(n))) return undefined;
      for (const n of names) t.requestNames.add(n);
      return res.registry([...t.requestNames], method.parent.file).then((r) => {
        t.request = r;
      });
    },
    prepareResponse(message) {
      const unknown = scanUnknown ? prepareUnknown(message) : undefined;
      if (!responsesMayHoldAny) return unknown;
      return unknown ? unknown.then(() => loadAny(message)) : loadAny(message);
    },
    formatResponse: (message) => formatter(output, message),
    responseValue(message) {
      try {
        return toJson(output, message, { alwaysEmitImplicit: true, registry: t.any });
      } catch {
        // An Any whose type no source knows: as printed (its bytes in base64).
        return JSON.parse(formatter(output, message)) as JsonValue;
      }
    },
  };
}

/** The type names of the "@type" keys of a JSON value (google.protobuf.Any in request JSON). */
function collectJsonTypeNames(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) {
    for (const v of value) collectJsonTypeNames(v, out);
  } else if (typeof value === "object" && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      if (k === "@type" && typeof v === "string") out.push(v.slice(v.lastIndexOf("/") + 1));
      else collectJsonTypeNames(v, out);
    }
  }
  return out;
}
