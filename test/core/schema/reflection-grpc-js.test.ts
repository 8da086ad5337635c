// Against a real @grpc/grpc-js server with @grpc/reflection: its files are named after the package,
// use relative type names and map entries not named ...Entry. Resolving and calling must still work.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { create, fromJson, toJson } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { createReflectionSource } from "../../../src/core/schema/reflection-client";
import { createResolver } from "../../../src/core/schema/resolver";
import {
  type GrpcJsReflectionServer,
  startGrpcJsReflectionServer,
} from "../../support/grpc-js-reflection-server";

describe("reflection against @grpc/grpc-js with @grpc/reflection", () => {
  let server: GrpcJsReflectionServer;
  before(async () => {
    server = await startGrpcJsReflectionServer();
  });
  after(async () => {
    await server.close();
  });

  for (const version of ["auto", "grpc-v1", "grpc-v1alpha"] as const) {
    test(`resolves services, methods and messages (${version})`, async () => {
      const transport = createGrpcTransport({ baseUrl: server.url });
      const resolver = createResolver([createReflectionSource({ transport, version, timeoutMs: 5000 })]);
      try {
        assert.deepEqual(await resolver.listServices(), ["shop.v1.OrderService"]);
        const method = await resolver.findMethod("shop.v1.OrderService", "GetOrder");
        assert.equal(method.input.typeName, "shop.v1.GetOrderRequest");
        assert.equal(method.output.typeName, "shop.v1.Order");
        // Relative names resolved in scope.
        const order = method.output;
        assert.equal(order.field.items.message?.typeName, "shop.v1.Order.Item");
        assert.equal(order.field.status.enum?.typeName, "shop.v1.Status");
        assert.equal(order.field.total.message?.typeName, "shop.common.Money");
        assert.equal(method.input.field.kind.enum?.typeName, "shop.v1.Order.Item.Kind");
        // The map entry named "Quantities" is a map.
        assert.equal(order.field.quantities.fieldKind, "map");
        assert.equal((await resolver.findMessage("shop.common.Money")).typeName, "shop.common.Money");
      } finally {
        await resolver.close();
      }
    });
  }

  test("encodes requests and decodes responses of its methods", async () => {
    const transport = createGrpcTransport({ baseUrl: server.url });
    const resolver = createResolver([createReflectionSource({ transport, timeoutMs: 5000 })]);
    try {
      const service = await resolver.findService("shop.v1.OrderService");
      const client = createClient(service, transport) as unknown as Record<
        string,
        (req: unknown) => Promise<unknown> & AsyncIterable<unknown>
      >;
      const getOrder = service.method.getOrder;
      const response = await client.getOrder(fromJson(getOrder.input, { id: "o-7", kind: "KIND_TOY" }));
      assert.deepEqual(toJson(getOrder.output, response as never), {
        id: "o-7",
        items: [{ sku: "book-1", kind: "KIND_BOOK", price: { currency: "EUR", units: "12" } }],
        quantities: { "book-1": 2 },
        status: "STATUS_OPEN",
        total: { currency: "EUR", units: "24" },
        created: "2023-11-14T22:13:20Z",
      });
      const echo = service.method.echoOrder;
      const sent = {
        id: "o-8",
        quantities: { a: 1, b: 2 },
        items: [{ sku: "toy", kind: "KIND_TOY" }],
        status: "STATUS_SHIPPED",
        note: "fragile",
      };
      const echoed = await client.echoOrder(fromJson(echo.input, sent));
      assert.deepEqual(toJson(echo.output, echoed as never), sent);
      const watch = service.method.watchOrders;
      const ids: string[] = [];
      for await (const msg of client.watchOrders(create(watch.input, { id: "w" }))) {
        ids.push((toJson(watch.output, msg as never) as { id: string }).id);
      }
      assert.deepEqual(ids, ["w-1", "w-2"]);
    } finally {
      await resolver.close();
    }
  });

  test("an unknown method suggests the close names", async () => {
    const transport = createGrpcTransport({ baseUrl: server.url });
    const resolver = createResolver([createReflectionSource({ transport, timeoutMs: 5000 })]);
    try {
      await assert.rejects(
        resolver.findMethod("shop.v1.OrderService", "GetOrders"),
        /Did you mean "GetOrder"/,
      );
      await assert.rejects(
        resolver.findService("shop.v1.OrderServic"),
        /Did you mean "shop.v1.OrderService"/,
      );
    } finally {
      await resolver.close();
    }
  });
});
