import assert from "node:assert/strict";
import * as net from "node:net";
import { describe, test } from "node:test";
import { create, type FileRegistry, type MessageInitShape, toJson } from "@bufbuild/protobuf";
import {
  anyPack,
  FileDescriptorProtoSchema,
  FieldDescriptorProto_Type as Type,
} from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { ProtocallError } from "../../../src/core/errors";
import { linkFiles } from "../../../src/core/schema/link";
import { createReflectionSource } from "../../../src/core/schema/reflection-client";
import { createResolver } from "../../../src/core/schema/resolver";
import type { SchemaSource } from "../../../src/core/schema/types";

type FileInit = MessageInitShape<typeof FileDescriptorProtoSchema>;
const file = (init: FileInit) => create(FileDescriptorProtoSchema, init);

/** A schema source over a linked registry, counting its calls. */
function registrySource(label: string, registry: FileRegistry) {
  const counts = { findType: 0, listServices: 0, close: 0 };
  const source: SchemaSource & { counts: typeof counts } = {
    label,
    counts,
    async listServices() {
      counts.listServices++;
      return [...registry]
        .filter((d) => d.kind === "service")
        .map((d) => d.typeName)
        .sort();
    },
    async findType(name) {
      counts.findType++;
      const desc = registry.get(name);
      return desc?.kind === "service" ||
        desc?.kind === "message" ||
        desc?.kind === "enum" ||
        desc?.kind === "extension"
        ? desc
        : undefined;
    },
    async findExtension(extendee, number) {
      const message = registry.getMessage(extendee);
      return message ? registry.getExtensionFor(message, number) : undefined;
    },
    async close() {
      counts.close++;
    },
  };
  return source;
}

/** A source that cannot answer at all. */
function brokenSource(label: string): SchemaSource {
  const fail = async (): Promise<never> => {
    throw new ProtocallError(`${label}: cannot read file`);
  };
  return { label, listServices: fail, findType: fail, findExtension: fail, close: async () => {} };
}

const first = linkFiles([
  file({
    name: "first.proto",
    package: "acme.v1",
    syntax: "proto3",
    messageType: [
      { name: "Thing", field: [{ name: "from_first", number: 1, type: Type.STRING }] },
      { name: "Empty" },
      { name: "Base", extensionRange: [{ start: 100, end: 200 }] },
    ],
    enumType: [{ name: "Color", value: [{ name: "COLOR_UNSPECIFIED", number: 0 }] }],
    service: [
      {
        name: "GreetService",
        method: [
          { name: "Greet", inputType: "Empty", outputType: "Thing" },
          { name: "Farewell", inputType: "Empty", outputType: "Thing" },
        ],
      },
    ],
  }),
]);

const second = linkFiles([
  file({
    name: "second.proto",
    package: "acme.v1",
    syntax: "proto2",
    messageType: [
      { name: "Thing", field: [{ name: "from_second", number: 1, type: Type.STRING }] },
      { name: "Empty" },
      { name: "Detail", field: [{ name: "reason", number: 1, type: Type.STRING }] },
      { name: "Base", extensionRange: [{ start: 100, end: 200 }] },
    ],
    extension: [{ name: "tag", number: 100, type: Type.STRING, extendee: "Base" }],
    service: [
      { name: "GreetService", method: [{ name: "Wave", inputType: "Empty", outputType: "Empty" }] },
      { name: "AdminService", method: [{ name: "Reset", inputType: "Empty", outputType: "Empty" }] },
    ],
  }),
]);

describe("createResolver", () => {
  test("the first source that defines an element wins; the well-known types come last", async () => {
    const resolver = createResolver([
      registrySource("schema one", first),
      registrySource("schema two", second),
    ]);
    const thing = await resolver.findMessage("acme.v1.Thing");
    assert.deepEqual(
      thing.fields.map((f) => f.name),
      ["from_first"],
    );
    assert.equal((await resolver.findService("acme.v1.AdminService")).methods[0].name, "Reset");
    assert.equal(
      (await resolver.findMessage("google.protobuf.Timestamp")).typeName,
      "google.protobuf.Timestamp",
    );
    assert.equal((await resolver.findEnum("acme.v1.Color")).values.length, 1);
    assert.equal((await resolver.findMessage(".acme.v1.Empty")).typeName, "acme.v1.Empty");
    assert.deepEqual(
      resolver.sources.map((s) => s.label),
      ["schema one", "schema two", "well-known types"],
    );
  });

  test("well-known types resolve with no source at all", async () => {
    const resolver = createResolver([]);
    assert.equal(
      (await resolver.findMessage("google.protobuf.Duration")).typeName,
      "google.protobuf.Duration",
    );
  });

  test("listServices is the sorted union; an error when no source can list", async () => {
    const resolver = createResolver([registrySource("one", first), registrySource("two", second)]);
    assert.deepEqual(await resolver.listServices(), ["acme.v1.AdminService", "acme.v1.GreetService"]);
    await assert.rejects(createResolver([]).listServices(), (err: unknown) => {
      assert.ok(err instanceof ProtocallError);
      assert.match(err.message, /no schema to list services from/);
      return true;
    });
    await assert.rejects(
      createResolver([brokenSource("descriptor set x.binpb")]).listServices(),
      (err: unknown) => {
        assert.ok(err instanceof ProtocallError);
        assert.equal(err.message, "cannot list services: descriptor set x.binpb: cannot read file");
        return true;
      },
    );
    // One broken source does not hide the others.
    const mixed = createResolver([brokenSource("broken"), registrySource("two", second)]);
    assert.deepEqual(await mixed.listServices(), ["acme.v1.AdminService", "acme.v1.GreetService"]);
  });

  test("an unknown service says what was tried and suggests close names", async () => {
    const resolver = createResolver([brokenSource("broken"), registrySource("schema one", first)]);
    await assert.rejects(resolver.findService("acme.v1.GreetServce"), (err: unknown) => {
      assert.ok(err instanceof ProtocallError);
      assert.equal(
        err.message,
        'service "acme.v1.GreetServce" not found. Tried broken: cannot read file; schema one: not defined there; ' +
          'well-known types: not defined there. Did you mean "acme.v1.GreetService"?',
      );
      return true;
    });
    // Without the package, the simple name still points at the service.
    await assert.rejects(resolver.findService("GreetService"), /Did you mean "acme.v1.GreetService"\?/);
  });

  test("a name of the wrong kind says what it is", async () => {
    const resolver = createResolver([registrySource("one", first)]);
    await assert.rejects(
      resolver.findMessage("acme.v1.GreetService"),
      /one: "acme.v1.GreetService" is a service, not a message/,
    );
    await assert.rejects(
      resolver.findEnum("acme.v1.Thing"),
      /one: "acme.v1.Thing" is a message, not an enum/,
    );
  });

  test("findMethod: later sources are asked when the first service lacks the method; close names suggested", async () => {
    const resolver = createResolver([registrySource("one", first), registrySource("two", second)]);
    assert.equal((await resolver.findMethod("acme.v1.GreetService", "Greet")).name, "Greet");
    assert.equal(
      (await resolver.findMethod("acme.v1.GreetService", "Wave")).parent.file.proto.name,
      "second.proto",
    );
    await assert.rejects(resolver.findMethod("acme.v1.GreetService", "Gret"), (err: unknown) => {
      assert.ok(err instanceof ProtocallError);
      assert.match(
        err.message,
        /method "acme.v1.GreetService\/Gret" not found: one: service "acme.v1.GreetService" has no method "Gret"/,
      );
      assert.match(err.message, /Did you mean "Greet"\?/);
      return true;
    });
    await assert.rejects(
      resolver.findMethod("acme.v1.GreetService", "Xyzzy"),
      /Its methods: Greet, Farewell\./,
    );
    await assert.rejects(resolver.findMethod("acme.v1.Nope", "Greet"), /service "acme.v1.Nope" not found/);
  });

  test("look-ups are cached per name", async () => {
    const one = registrySource("one", first);
    const resolver = createResolver([one]);
    await resolver.findService("acme.v1.GreetService");
    await resolver.findMethod("acme.v1.GreetService", "Greet");
    await resolver.findService("acme.v1.GreetService");
    assert.equal(one.counts.findType, 1);
  });

  test("findExtension asks each source in order", async () => {
    const resolver = createResolver([registrySource("one", first), registrySource("two", second)]);
    assert.equal((await resolver.findExtension("acme.v1.Base", 100))?.typeName, "acme.v1.tag");
    assert.equal(await resolver.findExtension("acme.v1.Base", 101), undefined);
  });

  test("registry() holds the given types and the well-known types, for Any in JSON", async () => {
    const resolver = createResolver([registrySource("one", first), registrySource("two", second)]);
    const detail = await resolver.findMessage("acme.v1.Detail");
    const any = anyPack(detail, create(detail, { reason: "quota" }));
    const registry = await resolver.registry([
      "acme.v1.Detail",
      "acme.v1.Unknown",
      "google.protobuf.Duration",
    ]);
    assert.ok(registry.getMessage("acme.v1.Detail"));
    assert.ok(registry.getMessage("google.protobuf.Timestamp"));
    assert.equal(registry.getMessage("acme.v1.Unknown"), undefined);
    const { AnySchema } = await import("@bufbuild/protobuf/wkt");
    assert.deepEqual(toJson(AnySchema, any, { registry }), {
      "@type": "type.googleapis.com/acme.v1.Detail",
      reason: "quota",
    });
  });

  test("close() closes every source once", async () => {
    const one = registrySource("one", first);
    const two = registrySource("two", second);
    const resolver = createResolver([one, two]);
    await Promise.all([resolver.close(), resolver.close()]);
    await resolver.close();
    assert.equal(one.counts.close, 1);
    assert.equal(two.counts.close, 1);
  });

  test("an unreachable reflection server keeps its RPC code", async () => {
    // A port that was free a moment ago: nothing listens there.
    const port = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, "127.0.0.1", () => {
        const p = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    const baseUrl = `http://127.0.0.1:${port}`;
    const resolver = createResolver([
      createReflectionSource({
        transport: createGrpcTransport({ baseUrl }),
        label: `reflection at ${baseUrl}`,
        timeoutMs: 3000,
      }),
    ]);
    try {
      await assert.rejects(resolver.findMethod("acme.v1.GreetService", "Greet"), (err: unknown) => {
        assert.ok(err instanceof ConnectError);
        assert.equal(err.code, Code.Unavailable);
        assert.match(
          err.rawMessage,
          /^cannot look up service "acme.v1.GreetService": reflection at http:\/\/127\.0\.0\.1:\d+: /,
        );
        return true;
      });
      await assert.rejects(
        resolver.listServices(),
        (err: unknown) => err instanceof ConnectError && err.code === Code.Unavailable,
      );
    } finally {
      await resolver.close();
    }
  });
});
