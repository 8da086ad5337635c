// `protocall run` and the editor's Send judge a request the same way: each request file runs as the
// real `protocall run` (dist/cli.js, its JSON report) and through the editor's path as far as it is
// core (prepareSend with the file's captured values, then the checked-request runner on a call
// session), and every verdict, check, message and captured value must be equal. The cases cover
// passing and failing checks, expected and unexpected RPC errors, captures feeding the next request,
// a dead server, and the DescriptorProto probe: an empty google.protobuf.DescriptorProto (proto2,
// every singular field with presence) where `message.options exists` and `message.name == null`
// used to pass in the editor and fail under run.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { create, createFileRegistry, toBinary } from "@bufbuild/protobuf";
import {
  FileDescriptorProtoSchema,
  FileDescriptorSetSchema,
  file_google_protobuf_descriptor,
} from "@bufbuild/protobuf/wkt";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { checkedRequestOf, runCheckedRequest } from "../../../src/core/assertions/checked-request";
import { createCallSession } from "../../../src/core/invoke/call-session";
import { parseRpcFile } from "../../../src/core/rpcfile/parse";
import { prepareSend } from "../../../src/core/rpcfile/prepare-send";
import { runCli } from "../../support/cli";
import { type DemoServer, startDemoServer } from "../../support/servers";

/** What both paths must agree on, per request. */
interface Judged {
  verdict: string;
  checks: { kind: string; text: string; line: number; passed: boolean; notRun: boolean; message: string }[];
}

/** A Connect server with `probe.v1.ProbeService/Echo`, which echoes a google.protobuf.DescriptorProto. */
async function startProbeServer(
  dir: string,
): Promise<{ url: string; schema: string; close(): Promise<void> }> {
  const file = create(FileDescriptorProtoSchema, {
    name: "probe/v1/probe.proto",
    package: "probe.v1",
    dependency: ["google/protobuf/descriptor.proto"],
    syntax: "proto3",
    service: [
      {
        name: "ProbeService",
        method: [
          {
            name: "Echo",
            inputType: ".google.protobuf.DescriptorProto",
            outputType: ".google.protobuf.DescriptorProto",
          },
        ],
      },
    ],
  });
  const registry = createFileRegistry(file, (name) =>
    name === "google/protobuf/descriptor.proto" ? file_google_protobuf_descriptor : undefined,
  );
  const service = registry.getService("probe.v1.ProbeService");
  assert.ok(service);
  const schema = join(dir, "probe.binpb");
  writeFileSync(
    schema,
    toBinary(
      FileDescriptorSetSchema,
      create(FileDescriptorSetSchema, { file: [file_google_protobuf_descriptor.proto, file] }),
    ),
  );
  const adapter = connectNodeAdapter({
    routes: (router) => router.service(service, { echo: (req: unknown) => req } as never),
  });
  const server: Server = createServer(adapter);
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    schema,
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}

describe("protocall run and the editor's Send give the same verdicts", { timeout: 300_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), "protocall-verdicts-"));
  const session = createCallSession({ product: "protocall/test" });
  let demo: DemoServer;
  let probe: Awaited<ReturnType<typeof startProbeServer>>;
  let deadUrl: string;

  before(async () => {
    [demo, probe] = await Promise.all([startDemoServer(), startProbeServer(dir)]);
    // A port nothing listens on.
    const s = createServer();
    await new Promise<void>((ok) => s.listen(0, "127.0.0.1", ok));
    deadUrl = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
    await new Promise<void>((ok) => s.close(() => ok()));
  });

  after(async () => {
    await session.close();
    await Promise.all([demo.close(), probe.close()]);
    rmSync(dir, { recursive: true, force: true });
  });

  /** The file through `protocall run --reporter json=…`. */
  async function viaRun(path: string): Promise<{ judged: Judged[]; code: number; stderr: string }> {
    const report = `${path}.json`;
    const r = await runCli(["run", path, "--reporter", `json=${report}`], { cwd: dir });
    const json = JSON.parse(readFileSync(report, "utf8")) as {
      requests: { verdict: string; checks: (Judged["checks"][number] & { notRun?: boolean })[] }[];
    };
    const judged = json.requests.map((q) => ({
      verdict: q.verdict,
      checks: q.checks.map((c) => ({
        kind: c.kind,
        text: c.text,
        line: c.line,
        passed: c.passed,
        notRun: c.notRun === true,
        message: c.message,
      })),
    }));
    return { judged, code: r.code, stderr: r.stderr };
  }

  /** The file as the editor's Send runs it, request by request, with the captured values kept. */
  async function viaSend(path: string): Promise<{ judged: Judged[]; captured: Record<string, string> }> {
    const text = readFileSync(path, "utf8");
    const parsed = parseRpcFile(text);
    const captured: Record<string, string> = {};
    const judged: Judged[] = [];
    for (const request of parsed.requests) {
      const p = prepareSend({
        text,
        parsed,
        filePath: path,
        requestIndex: request.index,
        processEnv: {},
        run: { captures: { ...captured } },
      });
      assert.deepEqual(
        p.problems.map((x) => x.text),
        [],
      );
      assert.ok(p.options);
      const checked = checkedRequestOf(p, p.options);
      const c = await runCheckedRequest(session, checked, { cwd: dir, env: {}, homedir: homedir() });
      Object.assign(captured, c.evaluation.captured);
      judged.push({
        verdict: c.verdict,
        checks: c.evaluation.checks.map((x) => ({
          kind: x.kind,
          text: x.text,
          line: x.range.start.line + 1,
          passed: x.passed,
          notRun: x.notRun === true,
          message: x.message,
        })),
      });
    }
    return { judged, captured };
  }

  async function same(name: string, text: string): Promise<Judged[]> {
    const path = join(dir, `${name}.rpc`);
    writeFileSync(
      path,
      text.replaceAll("DEMO", demo.url).replaceAll("PROBE", probe.url).replaceAll("DEAD", deadUrl),
    );
    const run = await viaRun(path);
    const send = await viaSend(path);
    assert.deepEqual(send.judged, run.judged, run.stderr);
    return run.judged;
  }

  test("the DescriptorProto probe: unset fields with presence are absent, repeated fields empty", async () => {
    const judged = await same(
      "probe",
      `### Empty
# @schema ./probe.binpb
# @assert message.options exists
# @assert message.name == null
# @assert message.options !exists
# @assert message.name !exists
# @assert message.field == []
PROBE/probe.v1.ProbeService/Echo

{}

### Set
# @schema ./probe.binpb
# @assert message.name == "Thing"
# @assert message.options exists
# @assert message.options == {"uninterpretedOption": []}
PROBE/probe.v1.ProbeService/Echo

{"name": "Thing", "options": {}}
`,
    );
    assert.deepEqual(
      judged[0].checks.map((c) => [c.text, c.passed]),
      [
        ["status == ok", true],
        ["message.options exists", false],
        ["message.name == null", false],
        ["message.options !exists", true],
        ["message.name !exists", true],
        ["message.field == []", true],
      ],
    );
    assert.match(
      judged[0].checks[2].message,
      /an unset field is left out, not null: write message\.name !exists$/,
    );
    assert.equal(judged[1].verdict, "passed", JSON.stringify(judged[1].checks));
  });

  test("checks on messages, headers, trailers, implicit defaults; captures feeding the next request", async () => {
    const judged = await same(
      "demo",
      `@host = DEMO

### Greet
# @assert message.greeting == "Hello, world!"
# @assert headers["content-type"] exists
# @capture greeting = message.greeting
{{host}}/demo.v1.GreetService/Greet

{"name": "world"}

### Use it
# @assert message.greeting == "Hello, Hello, world!!"
# @assert message.greeting == "nope"
{{host}}/demo.v1.GreetService/Greet

{"name": "{{greeting}}"}

### A stream
# @protocol grpc
# @assert messages[*].number == [1, 2]
# @assert message.text == ""
# @assert trailers["grpc-status"] == "0"
{{host}}/demo.v1.DemoService/Count

{"count": 2}

### A zero sum
# @assert message.sum == 0
{{host}}/demo.v1.DemoService/Sum

{"number": 0}
`,
    );
    assert.deepEqual(
      judged.map((j) => j.verdict),
      ["passed", "failed", "passed", "passed"],
    );
  });

  test("expected and unexpected RPC errors, and a dead server", async () => {
    const judged = await same(
      "errors",
      `### Expected
# @assert status == not_found
# @assert error.message == "gone"
# @assert error.details[google.rpc.ErrorInfo].reason == "DEMO_FAILURE"
# @assert error.details[google.rpc.BadRequest] exists
DEMO/demo.v1.DemoService/Fail

{"code": "CODE_NOT_FOUND", "message": "gone", "details": ["DETAIL_ERROR_INFO"]}

### Unexpected
DEMO/demo.v1.DemoService/Fail

{"code": "CODE_INVALID_ARGUMENT", "message": "bad"}

### Dead
# @assert error !exists
# @assert duration >= 0
DEAD/demo.v1.GreetService/Greet

{}
`,
    );
    assert.deepEqual(
      judged.map((j) => j.verdict),
      ["failed", "failed", "errored"],
    );
    assert.deepEqual(
      judged[2].checks.map((c) => [c.passed, c.notRun]),
      [
        [false, true],
        [false, true],
      ],
    );
  });
});
