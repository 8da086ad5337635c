// Parity with `buf curl` for where the schema comes from: reflection v1, the v1alpha fallback, an
// explicit reflection protocol, --schema as a directory, a descriptor set and stdin, and the list flags.
import { readFileSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import { type DemoServers, demoDescriptorSet, examplesDir, startDemoServers } from "../support/servers";
import { assertParity } from "./harness";

describe("parity: schema sources and listing", { concurrency: 4, timeout: 300_000 }, () => {
  let servers: DemoServers;
  let descriptorSet: string;
  before(async () => {
    [servers, descriptorSet] = await Promise.all([startDemoServers(), demoDescriptorSet()]);
  });
  after(() => servers?.close());

  const greet = (url: string) => `${url}/demo.v1.GreetService/Greet`;

  test("reflection v1: call, --list-services, --list-methods", async () => {
    await assertParity(["-d", '{"name":"v1"}', greet(servers.plain.url)], { code: 0 });
    await assertParity(["--list-services", servers.plain.url], { code: 0 });
    await assertParity(["--list-methods", servers.plain.url], { code: 0 });
    await assertParity(["--list-services", "--protocol", "grpc", servers.plain.url], { code: 0 });
    await assertParity(["--list-methods", "--protocol", "grpcweb", servers.plain.url], { code: 0 });
  });

  test("a server with only v1alpha reflection: automatic fallback", async () => {
    await assertParity(["-d", '{"name":"alpha"}', greet(servers.v1alphaOnly.url)], { code: 0 });
    await assertParity(["--list-services", servers.v1alphaOnly.url], { code: 0 });
    await assertParity(["--list-methods", "--protocol", "grpc", servers.v1alphaOnly.url], { code: 0 });
  });

  test("--reflect-protocol is used as given and never falls back", async () => {
    await assertParity(["--reflect-protocol", "grpc-v1alpha", "--list-services", servers.plain.url], {
      code: 0,
    });
    await assertParity(["--reflect-protocol", " GRPC-V1 ", "--list-services", servers.plain.url], {
      code: 0,
    });
    await assertParity(["--reflect-protocol", "grpc-v1alpha", "-d", "{}", greet(servers.v1alphaOnly.url)], {
      code: 0,
    });
    await assertParity(["--reflect-protocol", "grpc-v1", "-d", "{}", greet(servers.v1alphaOnly.url)], {
      errors: "code",
    });
  });

  test("a server without reflection fails unless --schema is given", async () => {
    await assertParity(["-d", "{}", greet(servers.http1.url)], { errors: "code" });
    await assertParity(["--schema", examplesDir, "-d", "{}", greet(servers.http1.url)], { code: 0 });
  });

  test("--schema directory: call and list without a URL", async () => {
    await assertParity(["--schema", examplesDir, "-d", '{"name":"dir"}', greet(servers.plain.url)], {
      code: 0,
    });
    await assertParity(["--schema", examplesDir, "--list-services"], { code: 0 });
    await assertParity(["--schema", examplesDir, "--list-methods"], { code: 0 });
    await assertParity(["--schema", examplesDir, "--list-methods", servers.plain.url], { code: 0 });
  });

  test("--schema descriptor set, and from stdin", async () => {
    await assertParity(["--schema", descriptorSet, "-d", '{"name":"set"}', greet(servers.plain.url)], {
      code: 0,
    });
    await assertParity(["--schema", descriptorSet, "--list-services"], { code: 0 });
    await assertParity(["--schema", descriptorSet, "--list-methods"], { code: 0 });
    await assertParity(["--schema", "-", "--list-methods"], { code: 0, stdin: readFileSync(descriptorSet) });
    await assertParity(["--schema", "-", "-d", '{"name":"stdin"}', greet(servers.plain.url)], {
      code: 0,
      stdin: readFileSync(descriptorSet),
    });
  });

  test("--schema together with --reflect", async () => {
    await assertParity(["--schema", examplesDir, "--reflect", "-d", "{}", greet(servers.plain.url)], {
      code: 0,
    });
    await assertParity(["--schema", descriptorSet, "--reflect", "--list-services", servers.plain.url], {
      code: 0,
    });
  });

  test("unknown services and methods fail with exit code 1", async () => {
    await assertParity(["-d", "{}", `${servers.plain.url}/demo.v1.GreetService/Nope`], { code: 1 });
    await assertParity(["-d", "{}", `${servers.plain.url}/demo.v1.NoSuchService/Greet`], { code: 1 });
    await assertParity(["--schema", examplesDir, "-d", "{}", `${servers.plain.url}/demo.v1.Greet/Greet`], {
      code: 1,
    });
    await assertParity(["--schema", examplesDir, "-d", "{}", `${servers.plain.url}/demo.v1.Color/Greet`], {
      code: 1,
    });
  });
});
