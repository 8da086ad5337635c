// A real @grpc/grpc-js server with @grpc/reflection, as many Node services run it. Its reflection
// answers are imperfect (files named after the package, relative type names, map entries not named
// ...Entry), which is exactly what the schema engine must cope with.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { ReflectionService } from "@grpc/reflection";

export const SHOP_PROTO = `syntax = "proto3";
package shop.v1;

import "shop/common/money.proto";
import "google/protobuf/timestamp.proto";

// An order: nested types, a map, an enum, an import and a well-known type.
message Order {
  message Item {
    enum Kind {
      KIND_UNSPECIFIED = 0;
      KIND_BOOK = 1;
      KIND_TOY = 2;
    }
    string sku = 1;
    Kind kind = 2;
    shop.common.Money price = 3;
  }
  string id = 1;
  repeated Item items = 2;
  map<string, int32> quantities = 3;
  Status status = 4;
  shop.common.Money total = 5;
  google.protobuf.Timestamp created = 6;
  optional string note = 7;
}

enum Status {
  STATUS_UNSPECIFIED = 0;
  STATUS_OPEN = 1;
  STATUS_SHIPPED = 2;
}

message GetOrderRequest {
  string id = 1;
  Order.Item.Kind kind = 2;
}

service OrderService {
  rpc GetOrder(GetOrderRequest) returns (Order);
  rpc EchoOrder(Order) returns (Order);
  rpc WatchOrders(GetOrderRequest) returns (stream Order);
}
`;

export const MONEY_PROTO = `syntax = "proto3";
package shop.common;

message Money {
  string currency = 1;
  int64 units = 2;
}
`;

export interface GrpcJsReflectionServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Starts the server on 127.0.0.1 with a random port, insecure (h2c). */
export async function startGrpcJsReflectionServer(): Promise<GrpcJsReflectionServer> {
  const dir = mkdtempSync(join(tmpdir(), "protocall-grpcjs-"));
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  };
  write("shop/v1/shop.proto", SHOP_PROTO);
  write("shop/common/money.proto", MONEY_PROTO);
  const definition = protoLoader.loadSync("shop/v1/shop.proto", {
    includeDirs: [dir],
    keepCase: false,
    longs: String,
    enums: String,
    defaults: false,
    oneofs: true,
  });
  rmSync(dir, { recursive: true, force: true });
  const pkg = grpc.loadPackageDefinition(definition) as unknown as {
    shop: { v1: { OrderService: grpc.ServiceClientConstructor } };
  };
  const server = new grpc.Server();
  const order = (id: string) => ({
    id,
    items: [{ sku: "book-1", kind: "KIND_BOOK", price: { currency: "EUR", units: "12" } }],
    quantities: { "book-1": 2 },
    status: "STATUS_OPEN",
    total: { currency: "EUR", units: "24" },
    created: { seconds: "1700000000", nanos: 0 },
  });
  server.addService(pkg.shop.v1.OrderService.service, {
    GetOrder(call: grpc.ServerUnaryCall<{ id: string }, unknown>, callback: grpc.sendUnaryData<unknown>) {
      callback(null, order(call.request.id));
    },
    EchoOrder(call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) {
      callback(null, call.request);
    },
    WatchOrders(call: grpc.ServerWritableStream<{ id: string }, unknown>) {
      call.write(order(`${call.request.id}-1`));
      call.write(order(`${call.request.id}-2`));
      call.end();
    },
  });
  new ReflectionService(definition).addToServer(server);
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    );
  });
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.tryShutdown(() => resolve());
        setTimeout(() => server.forceShutdown(), 2000).unref();
      }),
  };
}
