import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { after, before, describe, test } from "node:test";
import { create, fromBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema, timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Code, createClient } from "@connectrpc/connect";
import { bundledBufPath } from "../../../src/core/schema/find-buf";
import { linkFiles } from "../../../src/core/schema/link";
import { registerReflection } from "../../../src/core/schema/reflection-server";
import {
  ServerReflection,
  type ServerReflectionRequestSchema,
  type ServerReflectionResponse,
} from "../../../src/gen/grpc/reflection/v1/reflection_pb";
import { ServerReflection as ServerReflectionV1alpha } from "../../../src/gen/grpc/reflection/v1alpha/reflection_pb";
import {
  apiFile,
  baseFile,
  protocols,
  schemaFiles,
  startServer,
  type TestServer,
  transportFor,
} from "./reflection-test-kit";

type Request = MessageInitShape<typeof ServerReflectionRequestSchema>;

/** Sends the requests on one stream and returns the responses in order. */
async function exchange(
  server: TestServer,
  requests: Request[],
  protocol: (typeof protocols)[number] = "grpc",
) {
  const client = createClient(ServerReflection, transportFor(protocol, server.baseUrl));
  async function* send() {
    yield* requests;
  }
  const out: ServerReflectionResponse[] = [];
  for await (const response of client.serverReflectionInfo(send(), { timeoutMs: 5000 })) out.push(response);
  return out;
}

function fileNames(response: ServerReflectionResponse): string[] {
  assert.equal(response.messageResponse.case, "fileDescriptorResponse");
  if (response.messageResponse.case !== "fileDescriptorResponse") return [];
  return response.messageResponse.value.fileDescriptorProto.map(
    (b) => fromBinary(FileDescriptorProtoSchema, b).name,
  );
}

describe("registerReflection", () => {
  let server: TestServer;
  before(async () => {
    server = await startServer((router) => registerReflection(router, { files: schemaFiles }));
  });
  after(async () => {
    await server.close();
  });

  for (const protocol of protocols) {
    test(`${protocol}: answers every kind of request on one stream`, async () => {
      const responses = await exchange(
        server,
        [
          { messageRequest: { case: "listServices", value: "*" } },
          {
            host: "example",
            messageRequest: { case: "fileContainingSymbol", value: "acme.thing.v1.ThingService" },
          },
          { messageRequest: { case: "fileByFilename", value: "acme/base/v1/base.proto" } },
          { messageRequest: { case: "fileContainingSymbol", value: "acme.thing.v1.ThingService.GetThing" } },
          { messageRequest: { case: "fileContainingSymbol", value: "acme.thing.v1.Thing.created_at" } },
          {
            messageRequest: {
              case: "fileContainingExtension",
              value: { containingType: "acme.base.v1.Labels", extensionNumber: 100 },
            },
          },
          { messageRequest: { case: "allExtensionNumbersOfType", value: "acme.base.v1.Labels" } },
        ],
        protocol,
      );
      assert.equal(responses.length, 7);
      const [list, symbol, byName, method, field, extension, numbers] = responses;
      assert.deepEqual(
        list.messageResponse.case === "listServicesResponse" &&
          list.messageResponse.value.service.map((s) => s.name),
        [
          "acme.thing.v1.ThingService",
          "grpc.reflection.v1.ServerReflection",
          "grpc.reflection.v1alpha.ServerReflection",
        ],
      );
      // The file first, then its imports; the host is echoed.
      assert.deepEqual(fileNames(symbol), [
        "acme/thing/v1/thing.proto",
        "acme/base/v1/base.proto",
        "google/protobuf/timestamp.proto",
      ]);
      assert.equal(symbol.validHost, "example");
      assert.equal(symbol.originalRequest?.messageRequest.value, "acme.thing.v1.ThingService");
      // Files already sent on this stream are not sent again, except the one asked for.
      assert.deepEqual(fileNames(byName), ["acme/base/v1/base.proto"]);
      assert.deepEqual(fileNames(method), ["acme/thing/v1/thing.proto"]);
      assert.deepEqual(fileNames(field), ["acme/thing/v1/thing.proto"]);
      assert.deepEqual(fileNames(extension), ["acme/thing/v1/thing_ext.proto"]);
      assert.equal(numbers.messageResponse.case, "allExtensionNumbersResponse");
      assert.deepEqual(
        numbers.messageResponse.case === "allExtensionNumbersResponse" && {
          ...numbers.messageResponse.value,
          $typeName: undefined,
        },
        { $typeName: undefined, baseTypeName: "acme.base.v1.Labels", extensionNumber: [100] },
      );
    });
  }

  test("unknown names get error_response NOT_FOUND and the stream goes on", async () => {
    const responses = await exchange(server, [
      { messageRequest: { case: "fileContainingSymbol", value: "acme.Nope" } },
      { messageRequest: { case: "fileByFilename", value: "nope.proto" } },
      {
        messageRequest: {
          case: "fileContainingExtension",
          value: { containingType: "acme.base.v1.Labels", extensionNumber: 101 },
        },
      },
      { messageRequest: { case: "allExtensionNumbersOfType", value: "acme.Nope" } },
      { messageRequest: { case: "fileContainingSymbol", value: "acme.thing.v1.Thing" } },
    ]);
    for (const response of responses.slice(0, 4)) {
      assert.equal(response.messageResponse.case, "errorResponse");
      assert.equal(
        response.messageResponse.case === "errorResponse" && response.messageResponse.value.errorCode,
        Code.NotFound,
      );
    }
    assert.equal(
      responses[0].messageResponse.case === "errorResponse" &&
        responses[0].messageResponse.value.errorMessage,
      "symbol not found: acme.Nope",
    );
    assert.equal(fileNames(responses[4])[0], "acme/thing/v1/thing.proto");
  });

  test("serves the linked files: references fully qualified, json_name filled", async () => {
    const sloppy = linkFiles([apiFile, baseFile]); // a FileRegistry works as well
    const other = await startServer((router) => registerReflection(router, sloppy, { versions: ["v1"] }));
    try {
      const [response] = await exchange(other, [
        { messageRequest: { case: "fileContainingSymbol", value: "acme.thing.v1.GetThingRequest" } },
      ]);
      assert.ok(response.messageResponse.case === "fileDescriptorResponse");
      const served = fromBinary(
        FileDescriptorProtoSchema,
        response.messageResponse.value.fileDescriptorProto[0],
      );
      assert.equal(served.service[0].method[0].inputType, ".acme.thing.v1.GetThingRequest");
      assert.equal(served.messageType[0].field[1].jsonName, "createdAt");
    } finally {
      await other.close();
    }
  });

  test("only the versions asked for are registered", async () => {
    const v1alphaOnly = await startServer((router) =>
      registerReflection(router, { files: schemaFiles }, { versions: ["v1alpha"] }),
    );
    try {
      await assert.rejects(
        exchange(v1alphaOnly, [{ messageRequest: { case: "listServices", value: "" } }]),
        (err: unknown) => {
          return (err as { code?: Code }).code === Code.Unimplemented;
        },
      );
      const client = createClient(ServerReflectionV1alpha, transportFor("connect", v1alphaOnly.baseUrl));
      async function* one() {
        yield { messageRequest: { case: "listServices" as const, value: "" } };
      }
      const names: string[] = [];
      for await (const r of client.serverReflectionInfo(one(), { timeoutMs: 5000 })) {
        if (r.messageResponse.case === "listServicesResponse")
          names.push(...r.messageResponse.value.service.map((s) => s.name));
      }
      assert.deepEqual(names, ["acme.thing.v1.ThingService", "grpc.reflection.v1alpha.ServerReflection"]);
    } finally {
      await v1alphaOnly.close();
    }
  });

  test("the real buf curl lists and calls through our reflection (v1, and v1alpha alone)", async () => {
    const buf = bundledBufPath();
    assert.ok(buf, "the buf binary ships with @bufbuild/buf");
    const registry = linkFiles(schemaFiles);
    const service = registry.getService("acme.thing.v1.ThingService");
    assert.ok(service);
    const thing = service.method.getThing.output;
    for (const versions of [["v1", "v1alpha"], ["v1alpha"]] as const) {
      const server = await startServer((router) => {
        registerReflection(router, registry, { versions: [...versions] });
        router.service(service, {
          getThing: (req: { id: string }) =>
            create(thing, {
              id: req.id,
              parts: { a: 1 },
              createdAt: timestampFromMs(1_700_000_000_000),
            } as never),
        } as never);
      });
      try {
        const common = ["curl", "--protocol", "grpc", "--http2-prior-knowledge"];
        const list = await run(buf, [...common, "--list-methods", server.baseUrl]);
        assert.equal(list.code, 0, list.stderr);
        assert.match(list.stdout, /^acme\.thing\.v1\.ThingService\/GetThing$/m);
        const call = await run(buf, [
          ...common,
          `${server.baseUrl}/acme.thing.v1.ThingService/GetThing`,
          "-d",
          '{"id": "t-1"}',
        ]);
        assert.equal(call.code, 0, call.stderr);
        assert.deepEqual(JSON.parse(call.stdout), {
          id: "t-1",
          createdAt: "2023-11-14T22:13:20Z",
          parts: { a: 1 },
        });
      } finally {
        await server.close();
      }
    }
  });
});

function run(cmd: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout: 20_000 }, (err, stdout, stderr) => {
      if (err && typeof err.code !== "number") return reject(err);
      resolve({ code: err ? (err.code as number) : 0, stdout, stderr });
    });
  });
}
