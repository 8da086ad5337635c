// The message DemoService.Sample returns: every field of demo.v1.Everything set.
import { create } from "@bufbuild/protobuf";
import { anyPack, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { GreetResponseSchema } from "../gen/demo/v1/greet_pb";
import { Color, type Everything, Everything_Size, EverythingSchema } from "../gen/demo/v1/types_pb";

export function sampleEverything(text: string): Everything {
  return create(EverythingSchema, {
    text,
    flag: true,
    int32Value: -42,
    int64Value: -9007199254740993n,
    uint64Value: 18446744073709551615n,
    sint32Value: -7,
    sint64Value: -1234567890123n,
    uint32Value: 4294967295,
    fixed32Value: 7,
    fixed64Value: 1234567890123456789n,
    sfixed32Value: -8,
    sfixed64Value: -1234567890123456789n,
    doubleValue: 3.25,
    floatValue: 1.5,
    data: new TextEncoder().encode("protocall\u0000\u00ff"),
    color: Color.BLUE,
    size: Everything_Size.LARGE,
    nested: { name: "outer", values: [1, 2, 3], child: { name: "inner" } },
    tags: ["a", "b", "c"],
    items: [{ name: "first" }, { name: "second", values: [-1] }],
    colors: [Color.RED, Color.GREEN],
    numbers: [1n, -2n, 9007199254740993n],
    counts: { apples: 3n, pears: 5n },
    byId: { 1: { name: "one" }, 2: { name: "two" } },
    colorByName: { sky: Color.BLUE, grass: Color.GREEN },
    choice: { case: "choiceNested", value: { name: "chosen" } },
    maybeText: "",
    maybeNumber: 0,
    createdAt: timestampFromDate(new Date("2025-01-02T03:04:05.678Z")),
    ttl: { seconds: 90n, nanos: 500_000_000 },
    attributes: { name: "demo", count: 2, ok: true, none: null, nested: { list: [1, "two"] } },
    value: { kind: { case: "listValue", value: { values: [{ kind: { case: "numberValue", value: 1 } }] } } },
    list: {
      values: [{ kind: { case: "stringValue", value: "x" } }, { kind: { case: "boolValue", value: false } }],
    },
    extra: anyPack(GreetResponseSchema, create(GreetResponseSchema, { greeting: "packed in an Any" })),
    wrappedText: "",
    wrappedInt64: 64n,
    wrappedBool: false,
    wrappedDouble: 0.5,
    wrappedBytes: new Uint8Array([1, 2, 3]),
    mask: { paths: ["text", "nested.name"] },
    nothing: {},
    legacyName: "old",
    lateField: "late",
    jsonNamed: 46,
  });
}
