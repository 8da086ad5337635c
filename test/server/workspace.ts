// A temporary workspace for the language-server tests: a buf v2 module with an API that has comments,
// standard and custom options, deprecated elements, enums, a oneof and every streaming shape.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

export const annotationsProto = `syntax = "proto3";

package acme.v1;

import "google/protobuf/descriptor.proto";

extend google.protobuf.FieldOptions {
  bool sensitive = 50001;
}

extend google.protobuf.MethodOptions {
  string audit = 50002;
}

extend google.protobuf.EnumValueOptions {
  string label = 50003;
}
`;

export const shopProto = `syntax = "proto3";

package acme.v1;

import "acme/v1/annotations.proto";

// ShopService sells things.
service ShopService {
  // PlaceOrder places one order.
  rpc PlaceOrder(OrderRequest) returns (OrderResponse) {
    option idempotency_level = IDEMPOTENT;
    option (acme.v1.audit) = "orders";
  }
  // Watch streams the updates of an order.
  rpc Watch(OrderRequest) returns (stream OrderResponse);
  // Upload sends many orders.
  rpc Upload(stream OrderRequest) returns (OrderResponse);
  // OldPlace is the previous PlaceOrder.
  rpc OldPlace(OrderRequest) returns (OrderResponse) {
    option deprecated = true;
  }
}

// Color of an item.
enum Color {
  COLOR_UNSPECIFIED = 0;
  // Red like a fire truck.
  COLOR_RED = 1 [(acme.v1.label) = "red"];
  COLOR_BLUE = 2;
  // Out of stock.
  COLOR_GREEN = 3 [deprecated = true];
}

// OrderRequest asks for an item.
message OrderRequest {
  // The item's name, such as "book".
  string item = 1 [(acme.v1.sensitive) = true, debug_redact = true];
  // How many to order.
  int32 quantity = 2;
  Color color = 3;
  // Use item instead.
  string legacy_code = 4 [deprecated = true];
  // Where to send it.
  Address ship_to = 5;
  repeated Color colors = 6;
  oneof payment {
    string card = 7;
    string voucher = 8;
  }
  map<string, int64> counts = 9;
}

// Address is a postal address.
message Address {
  // Street and number.
  string street = 1;
  string city = 2;
}

// OrderResponse says what happened.
message OrderResponse {
  string id = 1;
}
`;

/** Creates the workspace; returns its directory. */
export function createWorkspace(): string {
  const dir = mkdtempSync(join(tmpdir(), "protocall-lsp-"));
  const write = (rel: string, text: string) => {
    const path = join(dir, rel);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
  };
  write("buf.yaml", "version: v2\nmodules:\n  - path: proto\n");
  write("proto/acme/v1/annotations.proto", annotationsProto);
  write("proto/acme/v1/shop.proto", shopProto);
  return dir;
}
