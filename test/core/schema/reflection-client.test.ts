import assert from "node:assert/strict";
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { create, fromBinary, fromJson, toBinary, toJson } from "@bufbuild/protobuf";
import { type FileDescriptorProto, FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type ConnectRouter } from "@connectrpc/connect";
import { ProtocallError } from "../../../src/core/errors";
import { createReflectionSource } from "../../../src/core/schema/reflection-client";
import { registerReflection } from "../../../src/core/schema/reflection-server";
import {
  ServerReflection,
  type ServerReflectionRequest,
  ServerReflectionRequestSchema,
  ServerReflectionResponseSchema,
} from "../../../src/gen/grpc/reflection/v1/reflection_pb";
import {
  apiFile,
  baseFile,
  protocols,
  rawServerHandle,
  schemaFiles,
  startServer,
  type TestServer,
  transportFor,
} from "./reflection-test-kit";

const V1_PATH = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo";
const V1ALPHA_PATH = "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo";

describe("reflection client against our reflection server", () => {
  const servers: Record<"both" | "v1" | "v1alpha", TestServer | undefined> = {
    both: undefined,
    v1: undefined,
    v1alpha: undefined,
  };
  before(async () => {
    servers.both = await startServer((r) => registerReflection(r, { files: schemaFiles }));
    servers.v1 = await startServer((r) =>
      registerReflection(r, { files: schemaFiles }, { versions: ["v1"] }),
    );
    servers.v1alpha = await startServer((r) =>
      registerReflection(r, { files: schemaFiles }, { versions: ["v1alpha"] }),
    );
  });
  after(async () => {
    await Promise.all(Object.values(servers).map((s) => s?.close()));
  });

  for (const protocol of protocols) {
    test(`${protocol}: lists, resolves and links over one stream`, async () => {
      const server = servers.both as TestServer;
      const before = server.calls.get(V1_PATH) ?? 0;
      const lines: string[] = [];
      const source = createReflectionSource({
        transport: transportFor(protocol, server.baseUrl),
        label: `reflection at ${server.baseUrl}`,
        log: (l) => lines.push(l),
        timeoutMs: 5000,
      });
      try {
        assert.deepEqual(await source.listServices(), [
          "acme.thing.v1.ThingService",
          "grpc.reflection.v1.ServerReflection",
          "grpc.reflection.v1alpha.ServerReflection",
        ]);
        const service = await source.findType("acme.thing.v1.ThingService");
        assert.equal(service?.kind, "service");
        assert.ok(service?.kind === "service");
        assert.deepEqual(
          service.methods.map((m) => [m.name, m.methodKind]),
          [
            ["GetThing", "unary"],
            ["ListThings", "server_streaming"],
          ],
        );
        const thing = service.method.getThing.output;
        const msg = fromJson(thing, {
          id: "t1",
          createdAt: "2024-05-06T07:08:09Z",
          parts: { a: 1 },
          kind: "KIND_BIG",
        });
        assert.deepEqual(toJson(thing, fromBinary(thing, toBinary(thing, msg))), {
          id: "t1",
          createdAt: "2024-05-06T07:08:09Z",
          parts: { a: 1 },
          kind: "KIND_BIG",
        });
        // Already known: answered without asking the server again.
        assert.equal((await source.findType("acme.thing.v1.Thing.Kind"))?.kind, "enum");
        const ext = await source.findExtension("acme.base.v1.Labels", 100);
        assert.equal(ext?.typeName, "acme.thing.v1.color");
        assert.equal(await source.findExtension("acme.base.v1.Labels", 150), undefined);
        assert.equal(await source.findType("acme.thing.v1.Nope"), undefined);
        assert.equal((await source.findFile("acme.base.v1.Labels"))?.proto.name, "acme/base/v1/base.proto");
        assert.equal(source.serviceName, "grpc.reflection.v1.ServerReflection");
      } finally {
        await source.close();
      }
      assert.equal((server.calls.get(V1_PATH) ?? 0) - before, 1, "one reflection stream for all look-ups");
      assert.ok(
        lines.includes("* Using server reflection grpc.reflection.v1.ServerReflection"),
        lines.join("\n"),
      );
      assert.ok(lines.some((l) => l.includes("file_containing_symbol acme.thing.v1.ThingService")));
      assert.ok(
        lines.includes('* Server reflection has resolved file "acme/thing/v1/thing.proto"'),
        lines.join("\n"),
      );
    });

    test(`${protocol}: auto mode falls back to v1alpha on a server without v1`, async () => {
      const server = servers.v1alpha as TestServer;
      const callsBefore = server.calls.get(V1ALPHA_PATH) ?? 0;
      const lines: string[] = [];
      const source = createReflectionSource({
        transport: transportFor(protocol, server.baseUrl),
        log: (l) => lines.push(l),
        timeoutMs: 5000,
      });
      try {
        assert.ok((await source.listServices()).includes("acme.thing.v1.ThingService"));
        assert.equal((await source.findType("acme.thing.v1.Thing"))?.kind, "message");
        assert.equal(source.serviceName, "grpc.reflection.v1alpha.ServerReflection");
      } finally {
        await source.close();
      }
      assert.ok(lines.some((l) => l.includes("falling back to grpc.reflection.v1alpha.ServerReflection")));
      assert.equal(
        (server.calls.get(V1ALPHA_PATH) ?? 0) - callsBefore,
        lines.filter((l) => l.includes("Using server reflection grpc.reflection.v1alpha")).length,
      );
    });
  }

  test("a v1-only server is used with v1 in auto mode and with an explicit grpc-v1", async () => {
    const server = servers.v1 as TestServer;
    for (const version of ["auto", "grpc-v1"] as const) {
      const source = createReflectionSource({ transport: transportFor("grpc", server.baseUrl), version });
      try {
        assert.equal((await source.findType("acme.thing.v1.GetThingRequest"))?.kind, "message");
        assert.equal(source.serviceName, "grpc.reflection.v1.ServerReflection");
      } finally {
        await source.close();
      }
    }
  });

  test("an explicit version never falls back", async () => {
    const cases = [
      { server: servers.v1alpha as TestServer, version: "grpc-v1" as const },
      { server: servers.v1 as TestServer, version: "grpc-v1alpha" as const },
    ];
    for (const { server, version } of cases) {
      const source = createReflectionSource({ transport: transportFor("connect", server.baseUrl), version });
      try {
        await assert.rejects(source.listServices(), (err: unknown) => {
          assert.ok(err instanceof ConnectError);
          assert.equal(err.code, Code.Unimplemented);
          return true;
        });
      } finally {
        await source.close();
      }
    }
  });

  test("an idle stream is closed and reopened by the next look-up", async () => {
    const server = servers.both as TestServer;
    const before = server.calls.get(V1_PATH) ?? 0;
    const lines: string[] = [];
    const source = createReflectionSource({
      transport: transportFor("grpc", server.baseUrl),
      idleTimeoutMs: 50,
      log: (l) => lines.push(l),
    });
    try {
      assert.equal((await source.findType("acme.thing.v1.Thing"))?.kind, "message");
      assert.equal((await source.findType("acme.thing.v1.GetThingRequest"))?.kind, "message"); // known: no request
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.ok((await source.listServices()).length > 0);
    } finally {
      await source.close();
    }
    assert.equal((server.calls.get(V1_PATH) ?? 0) - before, 2);
    assert.equal(lines.filter((l) => l.startsWith("* Using server reflection")).length, 2);
  });

  test("reflection headers are sent on the stream", async () => {
    const server = servers.both as TestServer;
    const source = createReflectionSource({
      transport: transportFor("grpc", server.baseUrl),
      headers: { authorization: "Bearer reflect-token", "x-tenant": "acme" },
    });
    try {
      await source.listServices();
    } finally {
      await source.close();
    }
    const last = server.headers[server.headers.length - 1];
    assert.equal(last.get("authorization"), "Bearer reflect-token");
    assert.equal(last.get("x-tenant"), "acme");
  });
});

/** A reflection server that answers from a function, for crafted (broken) responses. */
function craftedRoutes(
  answer: (
    req: ServerReflectionRequest,
  ) => Parameters<typeof create<typeof ServerReflectionResponseSchema>>[1],
) {
  return (router: ConnectRouter) =>
    router.service(ServerReflection, {
      async *serverReflectionInfo(requests) {
        for await (const req of requests) yield create(ServerReflectionResponseSchema, answer(req));
      },
    });
}

const bytes = (f: FileDescriptorProto) => toBinary(FileDescriptorProtoSchema, f);
const fileResponse = (...files: FileDescriptorProto[]) => ({
  messageResponse: {
    case: "fileDescriptorResponse" as const,
    value: { fileDescriptorProto: files.map(bytes) },
  },
});
const errorResponse = (errorCode: number, errorMessage: string) => ({
  messageResponse: { case: "errorResponse" as const, value: { errorCode, errorMessage } },
});

describe("reflection client with crafted responses", () => {
  test("error_response becomes an error with that gRPC code; not_found means undefined", async () => {
    const server = await startServer(
      craftedRoutes((req) =>
        req.messageRequest.case === "fileContainingSymbol" && req.messageRequest.value === "acme.Secret"
          ? errorResponse(Code.PermissionDenied, "no access to acme.Secret")
          : errorResponse(Code.NotFound, "symbol not found"),
      ),
    );
    const source = createReflectionSource({
      transport: transportFor("grpc", server.baseUrl),
      timeoutMs: 5000,
    });
    try {
      assert.equal(await source.findType("acme.Missing"), undefined);
      await assert.rejects(source.findType("acme.Secret"), (err: unknown) => {
        assert.ok(err instanceof ConnectError);
        assert.equal(err.code, Code.PermissionDenied);
        assert.match(err.rawMessage, /reflection/);
        assert.match(err.rawMessage, /no access to acme\.Secret/);
        return true;
      });
      await assert.rejects(
        source.listServices(),
        (err: unknown) => err instanceof ConnectError && err.code === Code.NotFound,
      );
    } finally {
      await source.close();
      await server.close();
    }
  });

  test("undecodable file descriptors and answers of the wrong kind are clear errors", async () => {
    const server = await startServer(
      craftedRoutes((req) =>
        req.messageRequest.case === "fileContainingSymbol"
          ? {
              messageResponse: {
                case: "fileDescriptorResponse",
                value: { fileDescriptorProto: [new Uint8Array([0x0a, 0xff, 0x01, 0x02])] },
              },
            }
          : { messageResponse: { case: "allExtensionNumbersResponse", value: { baseTypeName: "x" } } },
      ),
    );
    const source = createReflectionSource({
      transport: transportFor("connect", server.baseUrl),
      label: "reflection at t",
    });
    try {
      await assert.rejects(
        source.findType("a.B"),
        /^ProtocallError: reflection at t: the server answered file_containing_symbol a\.B with a file descriptor that cannot be decoded/,
      );
      await assert.rejects(
        source.listServices(),
        /^ProtocallError: reflection at t: the server answered list_services with allExtensionNumbersResponse/,
      );
    } finally {
      await source.close();
      await server.close();
    }
  });

  test("a file missing from the response is an error naming the file and its importer", async () => {
    const server = await startServer(
      craftedRoutes((req) =>
        req.messageRequest.case === "fileContainingSymbol"
          ? fileResponse(apiFile) // without acme/base/v1/base.proto
          : errorResponse(Code.NotFound, "file not found"),
      ),
    );
    const source = createReflectionSource({
      transport: transportFor("connect", server.baseUrl),
      label: "reflection at test",
    });
    try {
      await assert.rejects(source.findType("acme.thing.v1.Thing"), (err: unknown) => {
        assert.ok(err instanceof ProtocallError);
        assert.match(err.message, /^reflection at test: /);
        assert.match(
          err.message,
          /"acme\/base\/v1\/base\.proto", imported by "acme\/thing\/v1\/thing\.proto"/,
        );
        return true;
      });
    } finally {
      await source.close();
      await server.close();
    }
  });

  test("dependencies are fetched with file_by_filename; an import cycle names the files", async () => {
    const a = create(FileDescriptorProtoSchema, {
      name: "a.proto",
      package: "p",
      syntax: "proto3",
      dependency: ["b.proto"],
      messageType: [{ name: "A" }],
    });
    const b = create(FileDescriptorProtoSchema, {
      name: "b.proto",
      package: "p",
      syntax: "proto3",
      dependency: ["a.proto"],
      messageType: [{ name: "B" }],
    });
    const asked: string[] = [];
    const server = await startServer(
      craftedRoutes((req) => {
        asked.push(`${req.messageRequest.case} ${req.messageRequest.value}`);
        if (req.messageRequest.case === "fileContainingSymbol") return fileResponse(a);
        if (req.messageRequest.case === "fileByFilename" && req.messageRequest.value === "b.proto")
          return fileResponse(b);
        return errorResponse(Code.NotFound, "not found");
      }),
    );
    const source = createReflectionSource({ transport: transportFor("grpc", server.baseUrl) });
    try {
      await assert.rejects(source.findType("p.A"), (err: unknown) => {
        assert.ok(err instanceof ProtocallError);
        assert.match(
          err.message,
          /import cycle between files: "(a|b)\.proto" -> "(a|b)\.proto" -> "(a|b)\.proto"/,
        );
        return true;
      });
      assert.deepEqual(asked, ["fileContainingSymbol p.A", "fileByFilename b.proto"]);
    } finally {
      await source.close();
      await server.close();
    }
  });

  test("a reference to a file the server left out is fetched by symbol, trying enclosing scopes", async () => {
    // a.proto declares no imports but uses "Other" (relative, defined in p.other.proto).
    const a = create(FileDescriptorProtoSchema, {
      name: "p_a.proto",
      package: "p.sub",
      syntax: "proto3",
      messageType: [{ name: "A", field: [{ name: "o", number: 1, type: 11, typeName: "Other" }] }],
    });
    const other = create(FileDescriptorProtoSchema, {
      name: "p.proto",
      package: "p",
      syntax: "proto3",
      messageType: [{ name: "Other", field: [{ name: "x", number: 1, type: 9 }] }],
    });
    const asked: string[] = [];
    const server = await startServer(
      craftedRoutes((req) => {
        asked.push(String(req.messageRequest.value));
        if (req.messageRequest.case !== "fileContainingSymbol")
          return errorResponse(Code.NotFound, "not found");
        if (req.messageRequest.value === "p.sub.A") return fileResponse(a);
        if (req.messageRequest.value === "p.Other") return fileResponse(other);
        return errorResponse(Code.NotFound, "symbol not found");
      }),
    );
    const source = createReflectionSource({
      transport: transportFor("grpc", server.baseUrl),
      timeoutMs: 5000,
    });
    try {
      const msg = await source.findType("p.sub.A");
      assert.ok(msg?.kind === "message");
      assert.equal(msg.field.o.message?.typeName, "p.Other");
      assert.deepEqual(asked, ["p.sub.A", "p.sub.A.Other", "p.sub.Other", "p.Other"]);
      // A reference nothing defines stays a clear error.
      const broken = create(FileDescriptorProtoSchema, {
        name: "b.proto",
        package: "q",
        syntax: "proto3",
        messageType: [{ name: "B", field: [{ name: "n", number: 1, type: 11, typeName: "Nowhere" }] }],
      });
      const server2 = await startServer(
        craftedRoutes((req) =>
          req.messageRequest.case === "fileContainingSymbol" && req.messageRequest.value === "q.B"
            ? fileResponse(broken)
            : errorResponse(Code.NotFound, "symbol not found"),
        ),
      );
      const source2 = createReflectionSource({
        transport: transportFor("grpc", server2.baseUrl),
        label: "reflection at q",
      });
      try {
        await assert.rejects(
          source2.findType("q.B"),
          /^ProtocallError: reflection at q: cannot resolve message "Nowhere" referenced by field q.B.n in file "b.proto"/,
        );
      } finally {
        await source2.close();
        await server2.close();
      }
    } finally {
      await source.close();
      await server.close();
    }
  });

  test("a broken file elsewhere on the server does not spoil other look-ups; known types need no round trip", async () => {
    const good = create(FileDescriptorProtoSchema, {
      name: "good.proto",
      package: "p",
      syntax: "proto3",
      messageType: [{ name: "Good", nestedType: [{ name: "Inner" }] }],
    });
    const bad = create(FileDescriptorProtoSchema, {
      name: "bad.proto",
      package: "p",
      syntax: "proto3",
      messageType: [{ name: "Bad", field: [{ name: "n", number: 1, type: 11, typeName: ".p.Nowhere" }] }],
    });
    const asked: string[] = [];
    const server = await startServer(
      craftedRoutes((req) => {
        asked.push(String(req.messageRequest.value));
        if (req.messageRequest.value === "p.Good") return fileResponse(good);
        if (req.messageRequest.value === "p.Bad") return fileResponse(bad);
        return errorResponse(Code.NotFound, "symbol not found");
      }),
    );
    const source = createReflectionSource({
      transport: transportFor("grpc", server.baseUrl),
      timeoutMs: 5000,
    });
    try {
      await assert.rejects(source.findType("p.Bad"), /cannot resolve message "\.p\.Nowhere"/);
      assert.equal((await source.findType("p.Good"))?.kind, "message");
      assert.equal((await source.findType("p.Good.Inner"))?.kind, "message");
      assert.deepEqual(asked, ["p.Bad", "p.Nowhere", "p.Good"]);
    } finally {
      await source.close();
      await server.close();
    }
  });

  test("concurrent look-ups run one after another and share what arrived", async () => {
    const d = create(FileDescriptorProtoSchema, {
      name: "d.proto",
      package: "p",
      syntax: "proto3",
      messageType: [{ name: "D" }],
    });
    const fileFor = (name: string) =>
      create(FileDescriptorProtoSchema, {
        name: `${name.toLowerCase()}.proto`,
        package: "p",
        syntax: "proto3",
        dependency: ["d.proto"],
        messageType: [{ name, field: [{ name: "d", number: 1, type: 11, typeName: ".p.D" }] }],
      });
    const asked: string[] = [];
    const server = await startServer(
      craftedRoutes((req) => {
        const value = String(req.messageRequest.value);
        asked.push(value);
        if (req.messageRequest.case === "fileByFilename" && value === "d.proto") return fileResponse(d);
        if (req.messageRequest.case === "fileContainingSymbol" && (value === "p.A" || value === "p.B")) {
          return fileResponse(fileFor(value.slice(2)));
        }
        return errorResponse(Code.NotFound, "not found");
      }),
    );
    const source = createReflectionSource({
      transport: transportFor("grpc", server.baseUrl),
      timeoutMs: 5000,
    });
    try {
      const [a, b, dAgain] = await Promise.all([
        source.findType("p.A"),
        source.findType("p.B"),
        source.findType("p.D"),
      ]);
      assert.ok(a?.kind === "message" && b?.kind === "message" && dAgain?.kind === "message");
      assert.equal(a.field.d.message, dAgain, "one descriptor for p.D");
      assert.equal(b.field.d.message, dAgain);
      assert.deepEqual(asked, ["p.A", "d.proto", "p.B"]);
    } finally {
      await source.close();
      await server.close();
    }
  });

  test("dependencies sent later on the stream complete the schema", async () => {
    const server = await startServer(
      craftedRoutes((req) => {
        if (req.messageRequest.case === "fileContainingSymbol") return fileResponse(apiFile);
        if (req.messageRequest.case === "fileByFilename" && req.messageRequest.value === baseFile.name) {
          return fileResponse(baseFile);
        }
        return errorResponse(Code.NotFound, "not found");
      }),
    );
    const source = createReflectionSource({ transport: transportFor("grpcweb", server.baseUrl) });
    try {
      const svc = await source.findType("acme.thing.v1.ThingService");
      assert.equal(svc?.kind, "service");
      assert.equal(server.calls.get(V1_PATH), 1);
    } finally {
      await source.close();
      await server.close();
    }
  });
});

/** A raw h2c server speaking just enough gRPC to misbehave. */
async function startRawServer(onStream: (stream: http2.ServerHttp2Stream) => void): Promise<TestServer> {
  const server = http2.createServer();
  server.on("stream", (stream) => {
    stream.on("error", () => {}); // resets are what these servers are for
    onStream(stream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return rawServerHandle(server, (server.address() as AddressInfo).port);
}

function grpcFrame(payload: Uint8Array): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt32BE(payload.length, 1);
  return Buffer.concat([head, payload]);
}

describe("reflection client against misbehaving servers", () => {
  test("garbage bytes: one clear error, no hang", async () => {
    const server = await startRawServer((stream) => {
      stream.respond({ ":status": 200, "content-type": "application/grpc" });
      stream.on("data", () => {
        // A frame header that promises a message, followed by bytes that are not protobuf.
        stream.write(grpcFrame(Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f, 0x07, 0x07])));
      });
    });
    // Fails on the bytes, not by the timeout (which would say deadline_exceeded after a minute).
    const source = createReflectionSource({
      transport: transportFor("grpc", server.baseUrl),
      timeoutMs: 60_000,
    });
    try {
      await assert.rejects(source.listServices(), (err: unknown) => {
        assert.ok(err instanceof ConnectError);
        assert.notEqual(err.code, Code.DeadlineExceeded, err.rawMessage);
        assert.match(err.rawMessage, /list_services failed/);
        return true;
      });
    } finally {
      await source.close();
      await server.close();
    }
  });

  /**
   * A raw gRPC server that decodes each request and answers it, except that each stream is reset
   * instead of answering its request number `resetAt` (counted from 1); streams after `lastStream`
   * are reset at once.
   */
  async function startFlakyServer(resetAt: number, lastStream = Number.POSITIVE_INFINITY) {
    const files = new Map([
      [
        "x.Y",
        create(FileDescriptorProtoSchema, {
          name: "x.proto",
          package: "x",
          syntax: "proto3",
          messageType: [{ name: "Y" }, { name: "Z" }],
        }),
      ],
    ]);
    let streams = 0;
    const server = await startRawServer((stream) => {
      const index = ++streams;
      let answered = 0;
      let buffer = Buffer.alloc(0);
      stream.respond({ ":status": 200, "content-type": "application/grpc" });
      if (index > lastStream) {
        stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
        return;
      }
      stream.on("data", (chunk: Buffer) => {
        buffer = Buffer.concat([buffer, chunk]);
        while (buffer.length >= 5 && buffer.length >= 5 + buffer.readUInt32BE(1)) {
          const request = fromBinary(
            ServerReflectionRequestSchema,
            buffer.subarray(5, 5 + buffer.readUInt32BE(1)),
          );
          buffer = buffer.subarray(5 + buffer.readUInt32BE(1));
          if (answered + 1 === resetAt) {
            stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
            return;
          }
          answered++;
          const symbol =
            request.messageRequest.case === "fileContainingSymbol" ? request.messageRequest.value : "";
          const file = files.get(symbol.replace(/\.Z$/, ".Y"));
          const response = create(
            ServerReflectionResponseSchema,
            request.messageRequest.case === "listServices"
              ? { messageResponse: { case: "listServicesResponse", value: { service: [{ name: "x.S" }] } } }
              : file
                ? fileResponse(file)
                : errorResponse(Code.NotFound, "symbol not found"),
          );
          stream.write(grpcFrame(toBinary(ServerReflectionResponseSchema, response)));
        }
      });
    });
    return { server, streams: () => streams };
  }

  test("a stream that breaks after answering is reopened once, and the look-up succeeds", async () => {
    const { server, streams } = await startFlakyServer(2);
    const lines: string[] = [];
    const source = createReflectionSource({
      transport: transportFor("grpc", server.baseUrl),
      timeoutMs: 3000,
      log: (l) => lines.push(l),
    });
    try {
      assert.deepEqual(await source.listServices(), ["x.S"]);
      assert.equal((await source.findType("x.Y"))?.kind, "message");
      assert.equal(await source.findType("x.Nope"), undefined);
      assert.equal(streams(), 3);
      assert.equal(lines.filter((l) => l.includes("The reflection stream ended")).length, 2);
    } finally {
      await source.close();
      await server.close();
    }
  });

  test("a server that keeps closing the stream: one clear error, no hang", async () => {
    const { server, streams } = await startFlakyServer(2, 1);
    const source = createReflectionSource({
      transport: transportFor("grpc", server.baseUrl),
      timeoutMs: 3000,
    });
    try {
      assert.deepEqual(await source.listServices(), ["x.S"]);
      await assert.rejects(source.findType("x.Y"), (err: unknown) => {
        assert.ok(err instanceof ConnectError);
        assert.match(err.rawMessage, /file_containing_symbol x\.Y failed/);
        return true;
      });
      assert.equal(streams(), 2, "reopened once, not again and again");
    } finally {
      await source.close();
      await server.close();
    }
  });

  test("a server that never answers: bounded by the timeout", async () => {
    const server = await startRawServer((stream) => {
      stream.respond({ ":status": 200, "content-type": "application/grpc" });
    });
    const source = createReflectionSource({
      transport: transportFor("grpc", server.baseUrl),
      timeoutMs: 300,
    });
    try {
      await assert.rejects(source.listServices(), (err: unknown) => {
        assert.ok(err instanceof ConnectError);
        assert.equal(err.code, Code.DeadlineExceeded);
        assert.match(err.rawMessage, /no answer to list_services within 0\.3 s/);
        return true;
      });
    } finally {
      await source.close();
      await server.close();
    }
  });

  test("the caller's signal ends a pending look-up", async () => {
    const server = await startRawServer((stream) => {
      stream.respond({ ":status": 200, "content-type": "application/grpc" });
    });
    const controller = new AbortController();
    const source = createReflectionSource({
      transport: transportFor("grpc", server.baseUrl),
      signal: controller.signal,
      timeoutMs: 10_000,
    });
    try {
      const pending = source.listServices();
      setTimeout(() => controller.abort(), 100);
      await assert.rejects(
        pending,
        (err: unknown) => err instanceof ConnectError && err.code === Code.Canceled,
      );
    } finally {
      await source.close();
      await server.close();
    }
  });

  test("an HTTP 404 counts as unimplemented: auto mode falls back to v1alpha", async () => {
    // v1 gets a plain HTTP 404, v1alpha a real answer.
    const paths: string[] = [];
    const answer = create(ServerReflectionResponseSchema, {
      messageResponse: { case: "listServicesResponse", value: { service: [{ name: "old.Service" }] } },
    });
    const h2 = http2.createServer();
    h2.on("stream", (stream, headers) => {
      const path = String(headers[":path"]);
      paths.push(path);
      if (path === V1_PATH) {
        stream.respond({ ":status": 404, "content-type": "text/plain" });
        stream.end("not found");
        return;
      }
      stream.respond({ ":status": 200, "content-type": "application/connect+proto" });
      stream.on("data", () => {
        stream.write(grpcFrame(toBinary(ServerReflectionResponseSchema, answer)));
      });
    });
    await new Promise<void>((resolve) => h2.listen(0, "127.0.0.1", resolve));
    const handle = rawServerHandle(h2, (h2.address() as AddressInfo).port);
    const source = createReflectionSource({
      transport: transportFor("connect", handle.baseUrl),
      timeoutMs: 3000,
    });
    try {
      assert.deepEqual(await source.listServices(), ["old.Service"]);
      assert.deepEqual(paths, [V1_PATH, V1ALPHA_PATH]);
    } finally {
      await source.close();
      await handle.close();
    }
  });
});
