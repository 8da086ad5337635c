// Shared pieces of the reflection tests: a small schema with imports, nested types, a map and an
// extension; an h2c Connect server on loopback; and client transports for each protocol.
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  type FileDescriptorProto,
  FileDescriptorProtoSchema,
  FieldDescriptorProto_Label as Label,
  FieldDescriptorProto_Type as Type,
} from "@bufbuild/protobuf/wkt";
import type { ConnectRouter, Interceptor, Transport } from "@connectrpc/connect";
import {
  connectNodeAdapter,
  createConnectTransport,
  createGrpcTransport,
  createGrpcWebTransport,
} from "@connectrpc/connect-node";

type FileInit = MessageInitShape<typeof FileDescriptorProtoSchema>;
const file = (init: FileInit): FileDescriptorProto => create(FileDescriptorProtoSchema, init);

export const baseFile = file({
  name: "acme/base/v1/base.proto",
  package: "acme.base.v1",
  syntax: "proto2",
  messageType: [
    {
      name: "Labels",
      field: [{ name: "name", number: 1, type: Type.STRING, label: Label.OPTIONAL, jsonName: "name" }],
      extensionRange: [{ start: 100, end: 200 }],
    },
  ],
});

export const apiFile = file({
  name: "acme/thing/v1/thing.proto",
  package: "acme.thing.v1",
  syntax: "proto3",
  dependency: ["acme/base/v1/base.proto", "google/protobuf/timestamp.proto"],
  messageType: [
    {
      name: "Thing",
      field: [
        { name: "id", number: 1, type: Type.STRING, label: Label.OPTIONAL, jsonName: "id" },
        {
          name: "created_at",
          number: 2,
          type: Type.MESSAGE,
          label: Label.OPTIONAL,
          typeName: ".google.protobuf.Timestamp",
          jsonName: "createdAt",
        },
        {
          name: "parts",
          number: 3,
          type: Type.MESSAGE,
          label: Label.REPEATED,
          typeName: ".acme.thing.v1.Thing.PartsEntry",
          jsonName: "parts",
        },
        {
          name: "kind",
          number: 4,
          type: Type.ENUM,
          label: Label.OPTIONAL,
          typeName: ".acme.thing.v1.Thing.Kind",
          jsonName: "kind",
        },
      ],
      nestedType: [
        {
          name: "PartsEntry",
          options: { mapEntry: true },
          field: [
            { name: "key", number: 1, type: Type.STRING, label: Label.OPTIONAL, jsonName: "key" },
            { name: "value", number: 2, type: Type.INT32, label: Label.OPTIONAL, jsonName: "value" },
          ],
        },
      ],
      enumType: [
        {
          name: "Kind",
          value: [
            { name: "KIND_UNSPECIFIED", number: 0 },
            { name: "KIND_BIG", number: 1 },
          ],
        },
      ],
    },
    {
      name: "GetThingRequest",
      field: [{ name: "id", number: 1, type: Type.STRING, label: Label.OPTIONAL, jsonName: "id" }],
    },
  ],
  service: [
    {
      name: "ThingService",
      method: [
        { name: "GetThing", inputType: ".acme.thing.v1.GetThingRequest", outputType: ".acme.thing.v1.Thing" },
        {
          name: "ListThings",
          inputType: ".acme.thing.v1.GetThingRequest",
          outputType: ".acme.thing.v1.Thing",
          serverStreaming: true,
        },
      ],
    },
  ],
});

/** proto3 files may only extend options, so the extension lives in a proto2 file. */
export const extFile = file({
  name: "acme/thing/v1/thing_ext.proto",
  package: "acme.thing.v1",
  syntax: "proto2",
  dependency: ["acme/base/v1/base.proto"],
  extension: [
    {
      name: "color",
      number: 100,
      type: Type.STRING,
      label: Label.OPTIONAL,
      extendee: ".acme.base.v1.Labels",
      jsonName: "color",
    },
  ],
});

export const schemaFiles = [apiFile, extFile, baseFile];

export interface TestServer {
  baseUrl: string;
  port: number;
  /** How many RPCs (streams) the server received, by procedure path. */
  calls: Map<string, number>;
  /** Request headers of each received RPC, in order. */
  headers: Headers[];
  close(): Promise<void>;
}

/** Starts an h2c Connect server (Connect, gRPC and gRPC-Web) on 127.0.0.1 with a random port. */
export async function startServer(routes: (router: ConnectRouter) => void): Promise<TestServer> {
  const calls = new Map<string, number>();
  const headers: Headers[] = [];
  const record: Interceptor = (next) => async (req) => {
    calls.set(
      req.url.replace(/^https?:\/\/[^/]+/, ""),
      (calls.get(req.url.replace(/^https?:\/\/[^/]+/, "")) ?? 0) + 1,
    );
    headers.push(new Headers(req.header));
    return next(req);
  };
  const server = http2.createServer(connectNodeAdapter({ routes, interceptors: [record] }));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return rawServerHandle(server, port, calls, headers);
}

export function rawServerHandle(
  server: http2.Http2Server,
  port: number,
  calls = new Map<string, number>(),
  headers: Headers[] = [],
): TestServer {
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (s) => {
    sessions.add(s);
    s.on("close", () => sessions.delete(s));
  });
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    port,
    calls,
    headers,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sessions) s.destroy();
        server.close(() => resolve());
      }),
  };
}

export type Protocol = "connect" | "grpc" | "grpcweb";
export const protocols: Protocol[] = ["connect", "grpc", "grpcweb"];

export function transportFor(protocol: Protocol, baseUrl: string): Transport {
  switch (protocol) {
    case "connect":
      return createConnectTransport({ baseUrl, httpVersion: "2" });
    case "grpc":
      return createGrpcTransport({ baseUrl });
    case "grpcweb":
      return createGrpcWebTransport({ baseUrl, httpVersion: "2" });
  }
}
