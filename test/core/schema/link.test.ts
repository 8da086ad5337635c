import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  clone,
  create,
  fromBinary,
  fromJson,
  type MessageInitShape,
  toBinary,
  toJson,
} from "@bufbuild/protobuf";
import {
  type FileDescriptorProto,
  FileDescriptorProtoSchema,
  file_google_protobuf_timestamp,
  FieldDescriptorProto_Label as Label,
  SourceCodeInfoSchema,
  TimestampSchema,
  FieldDescriptorProto_Type as Type,
} from "@bufbuild/protobuf/wkt";
import { ProtocallError } from "../../../src/core/errors";
import { createLinker, linkFiles, UnresolvedReferenceError } from "../../../src/core/schema/link";

type FileInit = MessageInitShape<typeof FileDescriptorProtoSchema>;
const file = (init: FileInit): FileDescriptorProto => create(FileDescriptorProtoSchema, init);

const common = file({
  name: "acme/common/v1/common.proto",
  package: "acme.common.v1",
  syntax: "proto3",
  messageType: [
    { name: "Money", field: [{ name: "units", number: 1, type: Type.INT64, label: Label.OPTIONAL }] },
  ],
});

const api = file({
  name: "acme/shop/v1/shop.proto",
  package: "acme.shop.v1",
  syntax: "proto3",
  dependency: ["acme/common/v1/common.proto", "google/protobuf/timestamp.proto"],
  messageType: [
    {
      name: "Order",
      field: [
        { name: "order_id", number: 1, type: Type.STRING, label: Label.OPTIONAL },
        { name: "price", number: 2, type: Type.MESSAGE, label: Label.OPTIONAL, typeName: "common.v1.Money" },
        {
          name: "created_at",
          number: 3,
          type: Type.MESSAGE,
          label: Label.OPTIONAL,
          typeName: "google.protobuf.Timestamp",
        },
        { name: "state", number: 4, typeName: "State", label: Label.OPTIONAL },
        { name: "items", number: 5, type: Type.MESSAGE, label: Label.REPEATED, typeName: "Item" },
        { name: "note", number: 6, type: Type.STRING, label: Label.OPTIONAL, proto3Optional: true },
        { name: "labels", number: 7, type: Type.MESSAGE, label: Label.REPEATED, typeName: "Labels" },
      ],
      nestedType: [
        {
          name: "Item",
          field: [
            { name: "sku", number: 1, type: Type.STRING, label: Label.OPTIONAL },
            // Relative to the enclosing scopes: Order.Item -> Order -> acme.shop.v1
            { name: "state", number: 2, type: Type.ENUM, label: Label.OPTIONAL, typeName: "State" },
            { name: "parent", number: 3, type: Type.MESSAGE, label: Label.OPTIONAL, typeName: "Order" },
          ],
        },
        {
          // A map entry that is not named ...Entry, as some servers send it.
          name: "Labels",
          options: { mapEntry: true },
          field: [
            { name: "key", number: 1, type: Type.STRING, label: Label.OPTIONAL },
            { name: "value", number: 2, type: Type.STRING, label: Label.OPTIONAL },
          ],
        },
      ],
      enumType: [
        {
          name: "State",
          value: [
            { name: "STATE_UNSPECIFIED", number: 0 },
            { name: "STATE_PAID", number: 1 },
          ],
        },
      ],
    },
  ],
  service: [
    {
      name: "ShopService",
      method: [{ name: "GetOrder", inputType: "Order", outputType: "acme.shop.v1.Order" }],
    },
  ],
});

describe("linkFiles", () => {
  test("links files given in any order and adds the well-known imports", () => {
    for (const files of [
      [common, api],
      [api, common],
    ]) {
      const reg = linkFiles(files);
      const method = reg.getService("acme.shop.v1.ShopService")?.method.getOrder;
      assert.ok(method);
      assert.equal(method.input.typeName, "acme.shop.v1.Order");
      assert.equal(method.input.field.createdAt.message?.typeName, "google.protobuf.Timestamp");
      assert.equal(method.input.field.price.message?.typeName, "acme.common.v1.Money");
      assert.ok(reg.getFile("google/protobuf/timestamp.proto"));
    }
  });

  test("resolves relative names in nested scopes and writes them fully qualified", () => {
    const reg = linkFiles([api, common]);
    const order = reg.getMessage("acme.shop.v1.Order");
    assert.ok(order);
    const item = reg.getMessage("acme.shop.v1.Order.Item");
    assert.ok(item);
    assert.equal(item.field.state.enum?.typeName, "acme.shop.v1.Order.State");
    assert.equal(item.field.parent.message?.typeName, "acme.shop.v1.Order");
    // A field without a type but with an enum reference becomes an enum field.
    assert.equal(order.field.state.fieldKind, "enum");
    assert.equal(order.field.state.proto.type, Type.ENUM);
    assert.equal(order.field.state.proto.typeName, ".acme.shop.v1.Order.State");
    assert.equal(order.field.price.proto.typeName, ".acme.common.v1.Money");
    const method = reg.getService("acme.shop.v1.ShopService")?.methods[0];
    assert.equal(method?.proto.inputType, ".acme.shop.v1.Order");
  });

  test("fills json_name and adds a synthetic oneof for proto3 optional", () => {
    const reg = linkFiles([common, api]);
    const order = reg.getMessage("acme.shop.v1.Order");
    assert.ok(order);
    assert.equal(order.field.orderId.proto.jsonName, "orderId");
    assert.equal(order.field.orderId.proto.label, Label.OPTIONAL);
    assert.equal(linkFiles([file({ name: "bare.proto" })]).getFile("bare.proto")?.proto.syntax, "proto2");
    assert.equal(order.field.orderId.jsonName, "orderId");
    assert.equal(order.field.createdAt.jsonName, "createdAt");
    const note = order.field.note;
    assert.equal(note.presence, 1 /* EXPLICIT */);
    assert.equal(order.proto.oneofDecl.length, 1);
    assert.equal(order.proto.oneofDecl[0].name, "_note");
    assert.equal(note.proto.oneofIndex, 0);
    assert.equal(note.oneof, undefined); // synthetic oneofs are not real oneofs
  });

  test("map entries not named ...Entry work as maps, in binary and JSON", () => {
    const reg = linkFiles([common, api]);
    const order = reg.getMessage("acme.shop.v1.Order");
    assert.ok(order);
    assert.equal(order.field.labels.fieldKind, "map");
    const msg = fromJson(order, {
      orderId: "o-1",
      labels: { a: "1", b: "2" },
      state: "STATE_PAID",
      items: [{ sku: "x", state: "STATE_PAID" }],
      createdAt: "2024-01-02T03:04:05Z",
      note: "",
    });
    const back = toJson(order, fromBinary(order, toBinary(order, msg)));
    assert.deepEqual(back, {
      orderId: "o-1",
      labels: { a: "1", b: "2" },
      state: "STATE_PAID",
      items: [{ sku: "x", state: "STATE_PAID" }],
      createdAt: "2024-01-02T03:04:05Z",
      note: "",
    });
  });

  test("never changes the caller's descriptors", () => {
    const before = toBinary(FileDescriptorProtoSchema, api);
    linkFiles([api, common]);
    assert.deepEqual(toBinary(FileDescriptorProtoSchema, api), before);
    assert.equal(api.messageType[0].field[1].typeName, "common.v1.Money");
  });

  test("owned protos are completed in place; well-known files are the runtime's own", () => {
    const mine = clone(FileDescriptorProtoSchema, api);
    const reg = linkFiles([mine, common], { owned: true });
    assert.equal(mine.messageType[0].field[1].typeName, ".acme.common.v1.Money");
    assert.equal(reg.getFile("acme/shop/v1/shop.proto")?.proto, mine);
    assert.equal(reg.getFile("google/protobuf/timestamp.proto")?.proto, file_google_protobuf_timestamp.proto);
    // Linking the completed protos again gives the same result.
    assert.equal(
      linkFiles([mine, common]).getMessage("acme.shop.v1.Order")?.field.price.message?.typeName,
      "acme.common.v1.Money",
    );
  });

  test("a linker builds each file once and reuses it in later calls", () => {
    const linker = createLinker();
    const first = linker.link([common]);
    const second = linker.link([api]);
    const money = first.getMessage("acme.common.v1.Money");
    assert.ok(money);
    // The same descriptor, not a rebuilt copy.
    assert.equal(second.getMessage("acme.shop.v1.Order")?.field.price.message, money);
    assert.equal(second.getFile("acme/common/v1/common.proto"), first.getFile("acme/common/v1/common.proto"));
    // Well-known imports are the runtime's own descriptors.
    assert.equal(second.getMessage("acme.shop.v1.Order")?.field.createdAt.message, TimestampSchema);
  });

  test("a linker builds only what the roots need; a broken file elsewhere is left alone", () => {
    const broken = file({
      name: "broken.proto",
      package: "x",
      syntax: "proto3",
      messageType: [
        { name: "B", field: [{ name: "n", number: 1, type: Type.MESSAGE, typeName: "Nowhere" }] },
      ],
    });
    const linker = createLinker({ label: "reflection at test" });
    const registry = linker.link([broken, api, common], ["acme/shop/v1/shop.proto"]);
    assert.ok(registry.getService("acme.shop.v1.ShopService"));
    assert.equal(registry.getFile("broken.proto"), undefined);
    assert.throws(
      () => linker.link([], ["broken.proto"]),
      (err: unknown) =>
        err instanceof UnresolvedReferenceError &&
        err.message.startsWith('reflection at test: cannot resolve message "Nowhere"') &&
        err.candidates.join(",") === "x.B.Nowhere,x.Nowhere,Nowhere",
    );
  });

  test("a name used from a file that is not imported still links (the import is added)", () => {
    const user = file({
      name: "user.proto",
      package: "acme.shop.v1",
      syntax: "proto3",
      messageType: [{ name: "Wallet", field: [{ name: "m", number: 1, typeName: "acme.common.v1.Money" }] }],
    });
    const registry = linkFiles([user, common]);
    const wallet = registry.getMessage("acme.shop.v1.Wallet");
    assert.equal(wallet?.field.m.message?.typeName, "acme.common.v1.Money");
    assert.deepEqual(wallet?.file.proto.dependency, ["acme/common/v1/common.proto"]);
    assert.deepEqual(user.dependency, []); // the caller's proto is untouched
  });

  test("imports that also import each other are built in order (one-shot and incremental)", () => {
    const a = file({ name: "a.proto", package: "p", syntax: "proto3", messageType: [{ name: "A" }] });
    const b = file({
      name: "b.proto",
      package: "p",
      syntax: "proto3",
      dependency: ["a.proto"],
      messageType: [{ name: "B", field: [{ name: "a", number: 1, type: Type.MESSAGE, typeName: "A" }] }],
    });
    const top = file({
      name: "top.proto",
      package: "p",
      syntax: "proto3",
      dependency: ["a.proto", "b.proto"],
      messageType: [{ name: "Top", field: [{ name: "b", number: 1, type: Type.MESSAGE, typeName: "B" }] }],
    });
    for (const files of [
      [top, a, b],
      [b, top, a],
    ]) {
      assert.equal(linkFiles(files).getMessage("p.Top")?.field.b.message?.field.a.message?.typeName, "p.A");
      const registry = createLinker().link(files, ["top.proto"]);
      assert.equal(registry.getMessage("p.Top")?.field.b.message?.field.a.message?.typeName, "p.A");
    }
  });

  test("a given well-known file with source info is kept (its comments serve docs)", () => {
    const documented = clone(FileDescriptorProtoSchema, file_google_protobuf_timestamp.proto);
    documented.sourceCodeInfo = create(SourceCodeInfoSchema, {
      location: [{ path: [4, 0], span: [0, 0, 1], leadingComments: " A point in time.\n" }],
    });
    const registry = linkFiles([api, common, documented]);
    assert.equal(
      registry.getFile("google/protobuf/timestamp.proto")?.proto.sourceCodeInfo?.location[0].leadingComments,
      " A point in time.\n",
    );
    const plain = linkFiles([
      api,
      common,
      clone(FileDescriptorProtoSchema, file_google_protobuf_timestamp.proto),
    ]);
    assert.equal(
      plain.getFile("google/protobuf/timestamp.proto")?.proto,
      file_google_protobuf_timestamp.proto,
    );
  });

  test("a missing dependency names the file and who imports it", () => {
    assert.throws(
      () => linkFiles([api], { label: "descriptor set x.binpb" }),
      (err: unknown) =>
        err instanceof ProtocallError &&
        err.message.startsWith("descriptor set x.binpb: ") &&
        err.message.includes(
          '"acme/shop/v1/shop.proto" imports "acme/common/v1/common.proto", which is missing',
        ),
    );
  });

  test("an import cycle names the files", () => {
    const a = file({ name: "a.proto", package: "p", syntax: "proto3", dependency: ["b.proto"] });
    const b = file({ name: "b.proto", package: "p", syntax: "proto3", dependency: ["c.proto"] });
    const c = file({ name: "c.proto", package: "p", syntax: "proto3", dependency: ["a.proto"] });
    assert.throws(
      () => linkFiles([a, b, c]),
      (err: unknown) =>
        err instanceof ProtocallError &&
        /import cycle between files: "a.proto" -> "b.proto" -> "c.proto" -> "a.proto"/.test(err.message),
    );
  });

  test("an unresolvable reference names the field and the file", () => {
    const bad = file({
      name: "bad.proto",
      package: "p",
      syntax: "proto3",
      messageType: [{ name: "M", field: [{ name: "x", number: 1, type: Type.MESSAGE, typeName: "Nope" }] }],
    });
    assert.throws(
      () => linkFiles([bad]),
      (err: unknown) =>
        err instanceof ProtocallError &&
        err.message.includes('cannot resolve message "Nope" referenced by field p.M.x in file "bad.proto"'),
    );
  });

  test("protoc scoping: the first component binds to the innermost scope that has it", () => {
    // In scope a.b.M, "b.T" binds "b" to the package a.b (not to a top-level package b).
    const f = file({
      name: "s.proto",
      package: "a.b",
      syntax: "proto3",
      messageType: [
        { name: "T" },
        { name: "M", field: [{ name: "t", number: 1, type: Type.MESSAGE, typeName: "b.T" }] },
      ],
    });
    const other = file({ name: "o.proto", package: "b", syntax: "proto3", messageType: [{ name: "T" }] });
    const reg = linkFiles([f, other]);
    assert.equal(reg.getMessage("a.b.M")?.field.t.message?.typeName, "a.b.T");
  });

  test("references to well-known types that were not imported still resolve", () => {
    const f = file({
      name: "pkg.proto",
      package: "pkg",
      syntax: "proto3",
      messageType: [
        {
          name: "M",
          field: [{ name: "d", number: 1, type: Type.MESSAGE, typeName: "google.protobuf.Duration" }],
        },
      ],
    });
    const reg = linkFiles([f]);
    assert.equal(reg.getMessage("pkg.M")?.field.d.message?.typeName, "google.protobuf.Duration");
  });

  test("a malformed map entry is a clear error", () => {
    const f = file({
      name: "m.proto",
      package: "pkg",
      syntax: "proto3",
      messageType: [
        {
          name: "M",
          field: [{ name: "m", number: 1, type: Type.MESSAGE, label: Label.REPEATED, typeName: "MEntry" }],
          nestedType: [
            {
              name: "MEntry",
              options: { mapEntry: true },
              field: [{ name: "k", number: 3, type: Type.STRING }],
            },
          ],
        },
      ],
    });
    assert.throws(
      () => linkFiles([f]),
      /map entry pkg.M.MEntry in file "m.proto" must have exactly the fields key = 1/,
    );
  });
});
