// The mock server: every method of the schema on one port, over Connect (HTTP/1.1 and HTTP/2), gRPC
// (h2c and TLS) and gRPC-Web, JSON and binary, gzip, all four streaming shapes (connect-node's
// handlers), with CORS for pages, gRPC server reflection (v1 and v1alpha) and grpc.health.v1.
//
// A call goes to the first stub of its method whose checks hold (stub-match.ts); a method without
// stubs answers a message generated from the schema (generate.ts), or unimplemented when generation
// is off; a method whose stubs all fail answers not_found with the closest stubs and why each failed.
// With an upstream, what no stub answers goes there instead (upstream.ts), and may be recorded
// (record.ts). A service's handlers are made when it is first called (the schema links lazily,
// mock-schema.ts), reflection's on its first call. Every call is logged (call-log.ts) and listed on the admin path:
//   GET  /.protocall/mock/calls   the calls so far, as JSON {"calls": [...]}
//   POST /.protocall/mock/reset   forget the calls and start every sequence over
//   GET  /.protocall/mock/stubs   the stubs being served
import type { JsonValue, Message } from "@bufbuild/protobuf";
import { create, type DescMethod, type DescService, toJson } from "@bufbuild/protobuf";
import { Code, ConnectError, type ConnectRouter, type HandlerContext } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import {
  file_grpc_health_v1_health,
  Health,
  HealthCheckResponse_ServingStatus,
} from "../../gen/grpc/health/v1/health_pb";
import type { HeaderPair } from "../assertions/outcome";
import { registerReflection } from "../schema/reflection-server";
import type { ConnectionLimits } from "../serve/connection-guard";
import { answerAtOnce, isImmediate, messageOf, playAnswer } from "./answer";
import { CallLog, type MockCall } from "./call-log";
import { generateMessage } from "./generate";
import { adminHandler, withCorsAndAdmin } from "./http-front";
import { type MockListener, type NodeHandler, startMockListener } from "./listen";
import { type MockSchema, methodKey } from "./mock-schema";
import type { Recorder } from "./record";
import type { LoadedAnswer, Stub } from "./stub-load";
import { answerForMessage, noMatchMessage, outcomeOf, type RequestView, selectStub } from "./stub-match";
import type { StubSet } from "./stub-set";
import type { TemplateScope } from "./template";
import { forward, type Upstream } from "./upstream";

export { adminPrefix } from "./http-front";

export interface MockServerOptions {
  readonly schema: MockSchema;
  readonly stubs: StubSet;
  /** Answer methods without stubs with generated messages (default true); else unimplemented. */
  readonly generate?: boolean;
  /** The seed of generated messages (default 1). */
  readonly seed?: number;
  readonly host?: string;
  readonly port?: number;
  readonly tls?: { readonly cert: string; readonly key: string };
  /** Largest request message, in bytes (default 4 MiB); larger ones are refused with resource_exhausted. */
  readonly maxMessageBytes?: number;
  readonly limits?: ConnectionLimits;
  /** Where calls that no stub answers go (instead of generated answers or not_found). */
  readonly upstream?: Upstream;
  /** Writes the calls that went upstream as stubs (--record). */
  readonly recorder?: Recorder;
  /** Called after each call (the CLI prints a line). */
  readonly onCall?: (call: MockCall) => void;
  readonly env?: NodeJS.ProcessEnv;
}

export interface MockServer {
  readonly url: string;
  readonly port: number;
  readonly calls: CallLog;
  close(): Promise<void>;
}

function headerPairs(headers: Headers): HeaderPair[] {
  const out: HeaderPair[] = [];
  headers.forEach((value, name) => {
    out.push([name, value]);
  });
  return out;
}

interface CallState {
  readonly started: number;
  readonly time: string;
  readonly ctx: HandlerContext;
  readonly method: DescMethod;
  /** `package.Service/Method`. */
  readonly key: string;
  /** The request headers, read once per call (for stubs and the call log). */
  readonly headers: HeaderPair[];
  source: string;
  readonly requests: JsonValue[];
  /** The request messages as received (what goes upstream). */
  readonly inputs: Message[];
  readonly responses: JsonValue[];
}

async function* iterate<T>(items: readonly T[]): AsyncGenerator<T> {
  for (const i of items) yield i;
}

/** What every handler of one server shares. */
interface MockContext {
  readonly schema: MockSchema;
  readonly stubs: StubSet;
  /** Answer methods without stubs with generated messages; else unimplemented. */
  readonly generate: boolean;
  readonly env: NodeJS.ProcessEnv;
  readonly upstream?: Upstream;
  readonly recorder?: Recorder;
  readonly log: CallLog;
  /** The generated answer number `index` of a method. */
  readonly generated: (method: DescMethod, index: number) => { message: Message; json: JsonValue };
  /** How requests are written as JSON: with default values, as stubs match them. */
  readonly requestJsonOptions: {
    readonly registry: MockSchema["registry"];
    readonly alwaysEmitImplicit: true;
  };
}

export async function startMockServer(options: MockServerOptions): Promise<MockServer> {
  const { schema, stubs } = options;
  const log = new CallLog(1000, options.onCall);
  const mock: MockContext = {
    schema,
    stubs,
    generate: options.generate !== false,
    env: options.env ?? process.env,
    upstream: options.upstream,
    recorder: options.recorder,
    log,
    generated: generatedAnswers(schema, options.seed ?? 1),
    requestJsonOptions: { registry: schema.registry, alwaysEmitImplicit: true },
  };
  const handler = routeHandler(mock, options.maxMessageBytes ?? 4 * 1024 * 1024);
  const node = withCorsAndAdmin(handler, adminHandler(log, stubs));

  const listener: MockListener = await startMockListener({
    handler: node,
    host: options.host,
    port: options.port,
    tls: options.tls,
    limits: options.limits,
  });
  return {
    url: listener.url,
    port: listener.port,
    calls: log,
    close: async () => {
      await listener.close();
    },
  };
}

/** Generated answers depend only on the type, the seed and the index: made once each. */
function generatedAnswers(schema: MockSchema, seed: number): MockContext["generated"] {
  const generatedCache = new Map<string, { message: Message; json: JsonValue }>();
  return (method, index) => {
    const key = `${method.output.typeName}#${index}`;
    let found = generatedCache.get(key);
    if (!found) {
      const json = generateMessage(method.output, { seed, index });
      found = { json, message: messageOf(method.output, json, schema) };
      if (generatedCache.size < 10_000) generatedCache.set(key, found);
    }
    return found;
  };
}

function requestJson(mock: MockContext, method: DescMethod, message: Message): JsonValue {
  return toJson(method.input, message as never, mock.requestJsonOptions);
}

function responseJson(mock: MockContext, method: DescMethod, message: Message): JsonValue {
  return toJson(method.output, message as never, { registry: mock.schema.registry });
}

function begin(method: DescMethod, key: string, ctx: HandlerContext): CallState {
  return {
    started: performance.now(),
    time: new Date().toISOString(),
    ctx,
    method,
    key,
    headers: headerPairs(ctx.requestHeader),
    source: "generated",
    requests: [],
    inputs: [],
    responses: [],
  };
}

/** The end of a call: recorded when it went upstream (--record), and logged. */
function finish(mock: MockContext, state: CallState, err?: unknown): void {
  const e = err === undefined ? undefined : ConnectError.from(err);
  if (mock.recorder && state.source === "upstream" && e?.code !== Code.Canceled) {
    mock.recorder.add({
      method: state.method,
      requests: state.inputs,
      responseHeader: state.ctx.responseHeader,
      responseTrailer: state.ctx.responseTrailer,
      responses: state.responses,
      error: e,
    });
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of state.headers) headers[name] = value;
  mock.log.add({
    time: state.time,
    method: state.key,
    protocol: state.ctx.protocolName,
    source: state.source,
    status: e ? Code[e.code].replace(/[A-Z]/g, (c, i) => (i > 0 ? "_" : "") + c.toLowerCase()) : "ok",
    ...(e ? { message: e.rawMessage } : {}),
    durationMs: Math.round(performance.now() - state.started),
    headers,
    requests: state.requests,
    responses: state.responses,
  });
}

function scopeOf(mock: MockContext, stub: Stub, request: RequestView): TemplateScope {
  return {
    outcome: outcomeOf(request),
    variables: stub.variables,
    env: mock.env,
    where: stub.file,
  };
}

/**
 * The stub for a request; else "upstream" (with --upstream) or undefined for a generated answer; or
 * the error when there is none.
 */
function choose(mock: MockContext, state: CallState, request: RequestView): Stub | "upstream" | undefined {
  const { key } = state;
  const candidates = mock.stubs.forMethod(key);
  const toUpstream = () => {
    state.source = "upstream";
    return "upstream" as const;
  };
  if (candidates.length === 0) {
    if (mock.upstream) return toUpstream();
    if (mock.generate) return undefined;
    state.source = "unimplemented";
    throw new ConnectError(
      `${key} has no stub and generated answers are off (--no-generate); add a stub for it`,
      Code.Unimplemented,
    );
  }
  const selection = selectStub(candidates, request);
  if (!selection.stub) {
    if (mock.upstream) return toUpstream();
    state.source = "no match";
    throw new ConnectError(noMatchMessage(key, selection.closest, candidates.length), Code.NotFound);
  }
  state.source = selection.stub.label;
  return selection.stub;
}

/**
 * The reply of a unary or client-streaming call: the last message of its answer (or a generated
 * one, or upstream's). An answer without delays is played at once, so that such a call (the common
 * case) is answered without a promise of its own.
 */
function single(mock: MockContext, state: CallState, request: RequestView): Message | Promise<Message> {
  const { method, ctx } = state;
  const stub = choose(mock, state, request);
  if (stub === "upstream") return singleUpstream(mock, state);
  if (!stub) {
    const { json, message } = mock.generated(method, 0);
    state.responses.push(json);
    return message;
  }
  const { answer } = mock.stubs.nextAnswer(stub);
  const scope = scopeOf(mock, stub, request);
  if (isImmediate(answer)) {
    return (
      answerAtOnce(answer, ctx, method.output, scope, mock.schema, state.responses) ?? create(method.output)
    );
  }
  return lastOf(playAnswer(answer, ctx, method.output, scope, mock.schema, state.responses), method);
}

async function lastOf(messages: AsyncIterable<Message>, method: DescMethod): Promise<Message> {
  let last: Message | undefined;
  for await (const m of messages) last = m;
  return last ?? create(method.output);
}

function singleUpstream(mock: MockContext, state: CallState): Promise<Message> {
  const { method, ctx } = state;
  const input = method.methodKind === "unary" ? (state.inputs[0] as Message) : iterate(state.inputs);
  return lastOf(
    forward(mock.upstream as Upstream, method, ctx, input, (r) =>
      state.responses.push(responseJson(mock, method, r)),
    ),
    method,
  );
}

async function* stream(
  mock: MockContext,
  state: CallState,
  request: RequestView,
  count: number,
): AsyncGenerator<Message> {
  const { method, ctx } = state;
  const stub = choose(mock, state, request);
  if (stub === "upstream") {
    const input =
      method.methodKind === "server_streaming" ? (state.inputs[0] as Message) : iterate(state.inputs);
    yield* forward(mock.upstream as Upstream, method, ctx, input, (r) =>
      state.responses.push(responseJson(mock, method, r)),
    );
    return;
  }
  if (!stub) {
    for (let i = 0; i < count; i++) {
      const { json, message } = mock.generated(method, i);
      state.responses.push(json);
      yield message;
    }
    return;
  }
  const { answer } = mock.stubs.nextAnswer(stub);
  yield* playAnswer(answer, ctx, method.output, scopeOf(mock, stub, request), mock.schema, state.responses);
}

/** A handler per method of a service (all four shapes). */
function serviceRoutes(mock: MockContext, service: DescService) {
  return (router: ConnectRouter) => {
    for (const method of service.methods) {
      switch (method.methodKind) {
        case "unary":
          router.rpc(method, unaryHandler(mock, method) as never);
          break;
        case "server_streaming":
          router.rpc(method, serverStreamingHandler(mock, method) as never);
          break;
        case "client_streaming":
          router.rpc(method, clientStreamingHandler(mock, method) as never);
          break;
        case "bidi_streaming":
          router.rpc(method, bidiHandler(mock, method) as never);
          break;
      }
    }
  };
}

/** Runs the reply of a call and logs its end, whether the reply comes at once or later. */
function settled(
  mock: MockContext,
  state: CallState,
  reply: () => Message | Promise<Message>,
): Message | Promise<Message> {
  let result: Message | Promise<Message>;
  try {
    result = reply();
  } catch (err) {
    finish(mock, state, err);
    throw err;
  }
  if (!(result instanceof Promise)) {
    finish(mock, state);
    return result;
  }
  return result.then(
    (res) => {
      finish(mock, state);
      return res;
    },
    (err: unknown) => {
      finish(mock, state, err);
      throw err;
    },
  );
}

function unaryHandler(mock: MockContext, method: DescMethod) {
  const key = methodKey(method);
  return (req: Message, ctx: HandlerContext): Message | Promise<Message> => {
    const state = begin(method, key, ctx);
    return settled(mock, state, () => {
      state.requests.push(requestJson(mock, method, req));
      state.inputs.push(req);
      return single(mock, state, { headers: state.headers, messages: state.requests });
    });
  };
}

function serverStreamingHandler(mock: MockContext, method: DescMethod) {
  const key = methodKey(method);
  return async function* (req: Message, ctx: HandlerContext) {
    const state = begin(method, key, ctx);
    try {
      state.requests.push(requestJson(mock, method, req));
      state.inputs.push(req);
      yield* stream(mock, state, { headers: state.headers, messages: state.requests }, 3);
      finish(mock, state);
    } catch (err) {
      finish(mock, state, err);
      throw err;
    }
  };
}

function clientStreamingHandler(mock: MockContext, method: DescMethod) {
  const key = methodKey(method);
  return async (reqs: AsyncIterable<Message>, ctx: HandlerContext) => {
    const state = begin(method, key, ctx);
    try {
      for await (const r of reqs) {
        state.requests.push(requestJson(mock, method, r));
        state.inputs.push(r);
      }
    } catch (err) {
      finish(mock, state, err);
      throw err;
    }
    return settled(mock, state, () =>
      single(mock, state, { headers: state.headers, messages: state.requests }),
    );
  };
}

function bidiHandler(mock: MockContext, method: DescMethod) {
  const key = methodKey(method);
  return async function* (reqs: AsyncIterable<Message>, ctx: HandlerContext) {
    const state = begin(method, key, ctx);
    try {
      yield* bidi(mock, state, reqs);
      finish(mock, state);
    } catch (err) {
      finish(mock, state, err);
      throw err;
    }
  };
}

/**
 * A bidirectional call: the stub is chosen on the request headers and the first message. A
 * per-message stub answers each incoming message as it arrives; any other stub plays its answer
 * after the first message and then reads the rest of the stream. Generated: one message per message.
 */
async function* bidi(
  mock: MockContext,
  state: CallState,
  reqs: AsyncIterable<Message>,
): AsyncGenerator<Message> {
  const { method, ctx, headers } = state;
  const it = reqs[Symbol.asyncIterator]();
  const first = await it.next();
  if (first.done) {
    // No message: the stub is chosen on the headers alone.
    yield* stream(mock, state, { headers, messages: [] }, 0);
    return;
  }
  state.requests.push(requestJson(mock, method, first.value));
  state.inputs.push(first.value);
  const stub = choose(mock, state, { headers, messages: state.requests });
  if (stub === "upstream") {
    // The first message, then the rest as the client sends them.
    const rest = async function* () {
      yield first.value;
      for (let next = await it.next(); !next.done; next = await it.next()) {
        state.requests.push(requestJson(mock, method, next.value));
        yield next.value;
      }
    };
    yield* forward(mock.upstream as Upstream, method, ctx, rest(), (r) =>
      state.responses.push(responseJson(mock, method, r)),
    );
    return;
  }
  if (!stub) {
    let i = 0;
    let next: IteratorResult<Message> = first;
    while (!next.done) {
      if (i > 0) state.requests.push(requestJson(mock, method, next.value));
      const { json, message } = mock.generated(method, i++);
      state.responses.push(json);
      yield message;
      next = await it.next();
    }
    return;
  }
  if (!stub.perMessage) {
    const { answer } = mock.stubs.nextAnswer(stub);
    yield* playAnswer(
      answer,
      ctx,
      method.output,
      scopeOf(mock, stub, { headers, messages: state.requests }),
      mock.schema,
      state.responses,
    );
    for (let next = await it.next(); !next.done; next = await it.next()) {
      state.requests.push(requestJson(mock, method, next.value));
    }
    return;
  }
  yield* perMessage(mock, state, stub, headers, first, it);
}

/** A per-message stub's answers, one for each incoming message (the first one already read). */
async function* perMessage(
  mock: MockContext,
  state: CallState,
  stub: Stub,
  headers: HeaderPair[],
  first: IteratorResult<Message>,
  it: AsyncIterator<Message>,
): AsyncGenerator<Message> {
  const { method, ctx } = state;
  mock.stubs.nextAnswer(stub);
  let n = 0;
  let next: IteratorResult<Message> = first;
  while (!next.done) {
    const message = state.requests[n];
    const answer: LoadedAnswer | undefined = answerForMessage(stub, message, n, headers);
    if (answer) {
      yield* playAnswer(
        answer,
        ctx,
        method.output,
        scopeOf(mock, stub, { headers, messages: [message] }),
        mock.schema,
        state.responses,
      );
    }
    n++;
    next = await it.next();
    if (!next.done) state.requests.push(requestJson(mock, method, next.value));
  }
}

/**
 * The handler of every call: health, reflection, or the service's handlers. A service's handlers are
 * made when it is first called (or at start for the stubs' services), so that a schema of thousands
 * of services starts at once.
 */
function routeHandler(mock: MockContext, readMaxBytes: number): NodeHandler {
  const { schema } = mock;
  const adapters = new Map<string, Promise<NodeHandler | undefined>>();
  // The adapters made so far, to call without a promise's turn (every call after a service's first).
  const ready = new Map<string, NodeHandler | undefined>();
  const adapterFor = (name: string): Promise<NodeHandler | undefined> => {
    let found = adapters.get(name);
    if (!found) {
      found = schema.resolve(name).then((service) => {
        const adapter = service
          ? (connectNodeAdapter({
              routes: serviceRoutes(mock, service),
              readMaxBytes,
            }) as unknown as NodeHandler)
          : undefined;
        if (service) ready.set(name, adapter);
        return adapter;
      });
      adapters.set(name, found);
    }
    return found;
  };
  const { health, reflection } = healthAndReflection(schema, readMaxBytes);
  const notFound = connectNodeAdapter({ routes: () => {}, readMaxBytes }) as unknown as NodeHandler;
  const handler: NodeHandler = (req, res) => {
    const path = (req.url ?? "").split("?", 1)[0];
    const service = path.slice(1, path.lastIndexOf("/"));
    const fail = (err: unknown) => {
      if (!res.headersSent) {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ code: "internal", message: String(err) }));
      } else res.end();
    };
    if (service === "grpc.health.v1.Health") return health(req, res);
    if (/^grpc\.reflection\.v1(alpha)?\.ServerReflection$/.test(service)) {
      reflection().then((h) => h(req, res), fail);
      return;
    }
    const adapter = ready.get(service);
    if (adapter) return adapter(req, res);
    adapterFor(service).then((h) => (h ?? notFound)(req, res), fail);
  };
  for (const s of schema.services) void adapterFor(s.typeName);
  return handler;
}

/** Health, and reflection of the whole schema: reflection links every service on its first call. */
function healthAndReflection(
  schema: MockSchema,
  readMaxBytes: number,
): { health: NodeHandler; reflection: () => Promise<NodeHandler> } {
  const health = connectNodeAdapter({
    routes: (router) => router.service(Health, healthService(schema)),
    readMaxBytes,
  }) as unknown as NodeHandler;
  let reflection: Promise<NodeHandler> | undefined;
  const reflectionHandler = () => {
    reflection ??= schema.resolveAll().then(
      () =>
        connectNodeAdapter({
          routes: (router) => registerReflection(router, [...schema.files, file_grpc_health_v1_health]),
          readMaxBytes,
        }) as unknown as NodeHandler,
    );
    return reflection;
  };
  return { health, reflection: reflectionHandler };
}

/** grpc.health.v1.Health: SERVING for the server ("") and every served service. */
function healthService(schema: MockSchema) {
  const names = new Set(["", ...schema.serviceNames]);
  const statusOf = (service: string) => {
    if (!names.has(service)) {
      throw new ConnectError(`unknown service ${service}`, Code.NotFound);
    }
    return { status: HealthCheckResponse_ServingStatus.SERVING };
  };
  return {
    check: (req: { service: string }) => statusOf(req.service),
    list: () => ({
      statuses: Object.fromEntries(
        [...names].map((n) => [n, { status: HealthCheckResponse_ServingStatus.SERVING }]),
      ),
    }),
    async *watch(req: { service: string }, ctx: HandlerContext) {
      yield names.has(req.service)
        ? { status: HealthCheckResponse_ServingStatus.SERVING }
        : { status: HealthCheckResponse_ServingStatus.SERVICE_UNKNOWN };
      await new Promise<void>((resolve) =>
        ctx.signal.addEventListener("abort", () => resolve(), { once: true }),
      );
    },
  };
}
