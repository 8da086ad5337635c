// The mock's schema is linked lazily: loading reads only the service names; a service is linked when a
// stub or a call first needs it, and reflection links them all on its first call.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { DescService } from "@bufbuild/protobuf";
import { loadMockSchema } from "../../../src/core/mock/mock-schema";
import { startMockServer } from "../../../src/core/mock/server";
import { StubSet } from "../../../src/core/mock/stub-set";
import type { SchemaSource } from "../../../src/core/schema/types";
import { file_demo_v1_demo } from "../../../src/gen/demo/v1/demo_pb";
import { file_demo_v1_greet } from "../../../src/gen/demo/v1/greet_pb";
import { greetClient } from "./support";

/** A schema source of the demo services that records which types were looked up. */
function countingSource(): SchemaSource & { found: string[] } {
  const services = new Map<string, DescService>(
    [...file_demo_v1_demo.services, ...file_demo_v1_greet.services].map((s) => [s.typeName, s]),
  );
  const found: string[] = [];
  return {
    label: "demo files",
    found,
    listServices: async () => [...services.keys()].sort(),
    findType: async (name) => {
      found.push(name);
      return services.get(name);
    },
    findExtension: async () => undefined,
    close: async () => {},
  };
}

test("services are linked on first use: loading reads names only, a call links its service, reflection all", async () => {
  const source = countingSource();
  const schema = await loadMockSchema([source]);
  assert.deepEqual(schema.serviceNames, ["demo.v1.DemoService", "demo.v1.GreetService"]);
  assert.deepEqual(source.found, []);
  const stubs = new StubSet({ paths: [], cwd: process.cwd(), schema, log: () => {} });
  await stubs.load();
  const server = await startMockServer({ schema, stubs });
  try {
    await greetClient(server.url).greet({ name: "x" });
    assert.deepEqual(source.found, ["demo.v1.GreetService"]);
    const list = await fetch(`${server.url}/grpc.health.v1.Health/List`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    const statuses = ((await list.json()) as { statuses: Record<string, unknown> }).statuses;
    assert.deepEqual(Object.keys(statuses).sort(), ["", "demo.v1.DemoService", "demo.v1.GreetService"]);
    assert.deepEqual(source.found, ["demo.v1.GreetService"], "health needs no linking");
    await schema.resolveAll();
    assert.deepEqual(source.found.sort(), ["demo.v1.DemoService", "demo.v1.GreetService"]);
  } finally {
    await server.close();
  }
});
