// A real Connect / gRPC server (connect-node over h2c) with one client-streaming method whose request
// carries bytes: `upload.v1.UploadService/Upload(stream Chunk{bytes data}) returns (Summary)`, which
// hashes what it receives. Its schema is built here as a FileDescriptorProto and written as a
// descriptor set for `--schema`, so the tests need no .proto compiler. For `--stream-file`.
import { createHash } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  create,
  createFileRegistry,
  type DescMessage,
  type DescService,
  type Message,
  toBinary,
} from "@bufbuild/protobuf";
import {
  FieldDescriptorProto_Label,
  FieldDescriptorProto_Type,
  FileDescriptorProtoSchema,
  FileDescriptorSetSchema,
} from "@bufbuild/protobuf/wkt";
import { connectNodeAdapter } from "@connectrpc/connect-node";

export interface UploadServer {
  url: string;
  /** A descriptor set file with the upload service. */
  schema: string;
  close(): Promise<void>;
}

const file = create(FileDescriptorProtoSchema, {
  name: "upload/v1/upload.proto",
  package: "upload.v1",
  syntax: "proto3",
  messageType: [
    {
      name: "Chunk",
      field: [
        {
          name: "data",
          number: 1,
          type: FieldDescriptorProto_Type.BYTES,
          label: FieldDescriptorProto_Label.OPTIONAL,
          jsonName: "data",
        },
      ],
    },
    {
      name: "Summary",
      field: [
        {
          name: "bytes",
          number: 1,
          type: FieldDescriptorProto_Type.INT64,
          label: FieldDescriptorProto_Label.OPTIONAL,
          jsonName: "bytes",
        },
        {
          name: "chunks",
          number: 2,
          type: FieldDescriptorProto_Type.INT32,
          label: FieldDescriptorProto_Label.OPTIONAL,
          jsonName: "chunks",
        },
        {
          name: "sha256",
          number: 3,
          type: FieldDescriptorProto_Type.STRING,
          label: FieldDescriptorProto_Label.OPTIONAL,
          jsonName: "sha256",
        },
        {
          name: "largest",
          number: 4,
          type: FieldDescriptorProto_Type.INT32,
          label: FieldDescriptorProto_Label.OPTIONAL,
          jsonName: "largest",
        },
      ],
    },
  ],
  service: [
    {
      name: "UploadService",
      method: [
        {
          name: "Upload",
          inputType: ".upload.v1.Chunk",
          outputType: ".upload.v1.Summary",
          clientStreaming: true,
        },
      ],
    },
  ],
});

export async function startUploadServer(): Promise<UploadServer> {
  const registry = createFileRegistry(file, () => undefined);
  const service = registry.getService("upload.v1.UploadService") as DescService;
  const summary = registry.getMessage("upload.v1.Summary") as DescMessage;
  const dir = mkdtempSync(join(tmpdir(), "protocall-upload-"));
  const schema = join(dir, "upload.binpb");
  writeFileSync(schema, toBinary(FileDescriptorSetSchema, create(FileDescriptorSetSchema, { file: [file] })));
  const adapter = connectNodeAdapter({
    routes: (router) =>
      router.service(service, {
        // biome-ignore lint/suspicious/noExplicitAny: a service built at run time has untyped messages
        async upload(requests: AsyncIterable<any>) {
          const hash = createHash("sha256");
          let bytes = 0;
          let chunks = 0;
          let largest = 0;
          for await (const r of requests) {
            const data = (r as { data: Uint8Array }).data;
            hash.update(data);
            bytes += data.length;
            chunks++;
            largest = Math.max(largest, data.length);
          }
          return create(summary, {
            bytes: BigInt(bytes),
            chunks,
            sha256: hash.digest("hex"),
            largest,
          }) as Message;
        },
      } as never),
  });
  const server = http2.createServer(adapter);
  // Clients that keep their connection open (the editor's warm sessions) must not hold close() up.
  const sessions = new Set<http2.Http2Session>();
  server.on("session", (s) => {
    sessions.add(s);
    s.once("close", () => sessions.delete(s));
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    schema,
    close: () =>
      new Promise<void>((done) => {
        server.close(() => done());
        for (const s of sessions) s.close();
      }),
  };
}
