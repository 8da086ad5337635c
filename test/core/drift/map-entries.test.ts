import assert from "node:assert/strict";
import { test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { mapEntryName, withProtocMapEntryNames } from "../../../src/core/drift/map-entries";

test("map entries are named as protoc names them", () => {
  assert.equal(mapEntryName("quantities"), "QuantitiesEntry");
  assert.equal(mapEntryName("quantities_by_id"), "QuantitiesByIdEntry");
  assert.equal(mapEntryName("_x__y"), "XYEntry");
});

test("an entry named otherwise (as grpc-js's reflection names it) is renamed in a copy, with its field's type", () => {
  const file = create(FileDescriptorProtoSchema, {
    name: "shop_v1.proto",
    package: "shop.v1",
    messageType: [
      {
        name: "Order",
        field: [
          { name: "quantities", number: 3, label: 3, type: 11, typeName: ".shop.v1.Order.quantities_entry" },
        ],
        nestedType: [
          {
            name: "quantities_entry",
            options: { mapEntry: true },
            field: [
              { name: "key", number: 1, label: 1, type: 9 },
              { name: "value", number: 2, label: 1, type: 5 },
            ],
          },
        ],
      },
    ],
  });
  const [fixed] = withProtocMapEntryNames([file]);
  assert.notEqual(fixed, file);
  assert.equal(fixed.messageType[0].nestedType[0].name, "QuantitiesEntry");
  assert.equal(fixed.messageType[0].field[0].typeName, ".shop.v1.Order.QuantitiesEntry");
  assert.equal(file.messageType[0].nestedType[0].name, "quantities_entry", "the original is unchanged");
  const [again] = withProtocMapEntryNames([fixed]);
  assert.equal(again, fixed, "a file with protoc's names is returned as it is");
});
