// @grpc/reflection (protobufjs underneath) serves one file per package, without imports, and puts
// every extension it knows into the extended message as a field named ".full.name". A schema with
// custom options or proto2 extensions makes google_protobuf.proto and the declaring package refer to
// each other. Look-ups must still succeed.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { fromBinary, fromJson, toBinary, toJson } from "@bufbuild/protobuf";
import { createGrpcTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { ReflectionService } from "@grpc/reflection";
import { createReflectionSource, type ReflectionSource } from "../../../src/core/schema/reflection-client";
import { schemaFixturesDir } from "../../support/schema-fixtures";

let server: grpc.Server;
let source: ReflectionSource;

before(async () => {
  const definition = protoLoader.loadSync(
    ["fixtures/v1/greeter.proto", "fixtures/options/annotated.proto", "fixtures/proto2/legacy.proto"],
    {
      includeDirs: [schemaFixturesDir],
      keepCase: false,
      longs: String,
      enums: String,
      defaults: false,
      oneofs: true,
    },
  );
  server = new grpc.Server();
  new ReflectionService(definition).addToServer(server);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (e, p) =>
      e ? reject(e) : resolve(p),
    ),
  );
  source = createReflectionSource({
    transport: createGrpcTransport({ baseUrl: `http://127.0.0.1:${port}` }),
    timeoutMs: 5000,
  });
});

after(async () => {
  await source?.close();
  server?.forceShutdown();
});

test("services of a schema with custom options resolve", async () => {
  for (const name of ["fixtures.v1.Greeter", "fixtures.options.AnnotatedService"]) {
    const service = await source.findType(name);
    assert.equal(service?.kind, "service", name);
  }
  const request = await source.findType("fixtures.v1.GreetRequest");
  assert.ok(request?.kind === "message");
  const message = fromJson(request, { name: "n", labels: { a: "b" } });
  assert.deepEqual(toJson(request, fromBinary(request, toBinary(request, message))), {
    name: "n",
    labels: { a: "b" },
  });
});

test("proto3 optional fields, which @grpc/reflection sends as plain oneofs named _field, are optional", async () => {
  const request = await source.findType("fixtures.v1.GreetRequest");
  assert.ok(request?.kind === "message");
  assert.deepEqual(
    request.oneofs.map((o) => o.name),
    ["address"],
    "no real oneof _times",
  );
  assert.equal(request.field.times.proto.proto3Optional, true);
  assert.equal(request.field.times.oneof, undefined);
  const message = fromJson(request, { times: 0 });
  assert.deepEqual(toJson(request, fromBinary(request, toBinary(request, message))), { times: 0 });
});

test("proto2 messages with nested extensions resolve, and so do the extensions", async () => {
  const legacy = await source.findType("fixtures.proto2.Legacy");
  assert.equal(legacy?.kind, "message");
  assert.equal(
    (await source.findExtension("fixtures.proto2.Legacy", 100))?.typeName,
    "fixtures.proto2.priority",
  );
});
