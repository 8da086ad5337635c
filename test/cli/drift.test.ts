// `protocall drift` end to end: the real CLI against servers with reflection (the grpc-go interop
// server, our connect-node demo server, a grpc-js server) and their real sources, classified by the
// bundled buf. The sources are Debian's grpc-proto files, the examples workspace, and copies of them
// with known changes.
import assert from "node:assert/strict";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, describe, test } from "node:test";
import { runCli } from "../support/cli";
import { MONEY_PROTO, SHOP_PROTO, startGrpcJsReflectionServer } from "../support/grpc-js-reflection-server";
import { buildInteropServers, type InteropServer, startInteropServer } from "../support/interop-servers";
import {
  type DemoServer,
  demoDescriptorSet,
  examplesDir,
  startDemoServer,
  startTlsDemoServer,
} from "../support/servers";
import { createTestPki } from "../support/tls";

interface JsonDifference {
  change: string;
  element: string;
  name: string;
  properties: { property: string; input: string; against: string }[];
  input?: { file: string; line?: number };
  against?: { file: string; line?: number };
  breaking: boolean;
  rules: { rule: string; message: string }[];
}

interface JsonReport {
  input: { spec: string; kind: string };
  against: { spec: string; kind: string };
  rules: string;
  differences: JsonDifference[];
  unserved: string[];
  verdict: string;
}

const grpcProto = "/usr/share/grpc-proto/grpc/testing";
const work = mkdtempSync(join(tmpdir(), "protocall-drift-cli-"));
after(() => rmSync(work, { recursive: true, force: true }));

/** A copy of the interop protos as a plain workspace, optionally edited. */
function interopWorkspace(name: string, edit: (files: Record<string, string>) => void = () => {}): string {
  const root = join(work, name);
  const files: Record<string, string> = {};
  for (const f of ["empty.proto", "messages.proto", "test.proto"]) {
    files[`grpc/testing/${f}`] = readFileSync(join(grpcProto, f), "utf8");
  }
  edit(files);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

/** The 1-based line of the first line of `text` that contains `needle`. */
function lineOf(text: string, needle: string): number {
  const index = text.split("\n").findIndex((l) => l.includes(needle));
  assert.ok(index >= 0, `no line contains ${needle}`);
  return index + 1;
}

function replaceOnce(text: string, from: string, to: string): string {
  assert.ok(text.includes(from), `the source no longer contains ${from}`);
  return text.replace(from, to);
}

describe("drift against the grpc-go interop server's reflection", () => {
  let server: InteropServer;
  let descriptorSet: string;
  before(async () => {
    const [pki, built] = await Promise.all([createTestPki(), buildInteropServers()]);
    descriptorSet = built.descriptorSet;
    server = await startInteropServer("grpc-go", pki);
  });
  after(() => server.close());

  test("its own .proto files: no differences, exit 0", async () => {
    const source = interopWorkspace("same");
    const r = await runCli(["drift", server.plainUrl, "--against", source], {
      cwd: work,
      timeoutMs: 120_000,
    });
    assert.equal(r.stderr, "");
    assert.equal(r.code, 0, r.stdout);
    assert.match(r.stdout, /^no differences between http:\/\/127\.0\.0\.1:\d+ and .*same$/m);
    // The server lists TestService alone; the others its test.proto declares are noted, not counted.
    assert.match(
      r.stdout,
      /^note: the server's files also declare services it does not serve: .*grpc\.testing\.UnimplementedService/m,
    );
    const json = await runCli(["drift", server.plainUrl, "--against", source, "--format", "json"], {
      cwd: work,
      timeoutMs: 120_000,
    });
    assert.equal(json.code, 0, json.stderr);
    const report = JSON.parse(json.stdout) as JsonReport;
    assert.deepEqual(report.differences, []);
    assert.equal(report.verdict, "same");
    assert.equal(report.rules, "FILE");
    assert.deepEqual(report.input, { spec: server.plainUrl, kind: "server" });
    assert.equal(report.against.kind, "workspace");
    assert.ok(report.unserved.includes("grpc.testing.ReconnectService"));
    assert.ok(!report.unserved.some((s) => s.startsWith("grpc.reflection.")));
  });

  test("the descriptor set next to the binary: no differences", async () => {
    const r = await runCli(["drift", server.plainUrl, "--against", descriptorSet], {
      cwd: work,
      timeoutMs: 120_000,
    });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^no differences/m);
  });

  test("a field renumbered, a method removed and a field added: each at file:line, classified by buf", async () => {
    let messages = "";
    let testProto = "";
    const source = interopWorkspace("changed", (files) => {
      files["grpc/testing/messages.proto"] = replaceOnce(
        replaceOnce(
          files["grpc/testing/messages.proto"],
          "  int32 response_size = 2;",
          "  int32 response_size = 20;",
        ),
        "message SimpleResponse {\n",
        "message SimpleResponse {\n  string note = 99;\n",
      );
      files["grpc/testing/test.proto"] = files["grpc/testing/test.proto"].replace(
        /\n[^\n]*rpc CacheableUnaryCall\(SimpleRequest\) returns \(SimpleResponse\);/,
        "",
      );
      messages = files["grpc/testing/messages.proto"];
      testProto = files["grpc/testing/test.proto"];
    });
    assert.ok(!testProto.includes("CacheableUnaryCall("));
    const messagesPath = join(source, "grpc/testing/messages.proto");
    const testPath = join(source, "grpc/testing/test.proto");

    const r = await runCli(["drift", server.plainUrl, "--against", source, "--format", "json"], {
      cwd: work,
      timeoutMs: 120_000,
    });
    assert.equal(r.code, 1, r.stdout + r.stderr);
    const report = JSON.parse(r.stdout) as JsonReport;
    assert.equal(report.verdict, "breaking");
    const byName = new Map(report.differences.map((d) => [d.name, d]));
    assert.equal(report.differences.length, 3, JSON.stringify(report.differences, null, 2));

    const renumbered = byName.get("grpc.testing.SimpleRequest.response_size");
    assert.ok(renumbered);
    assert.equal(renumbered.change, "changed");
    assert.deepEqual(renumbered.properties, [{ property: "number", input: "2", against: "20" }]);
    assert.deepEqual(renumbered.against, {
      file: messagesPath,
      line: lineOf(messages, "response_size = 20"),
    });
    assert.equal(renumbered.breaking, true);
    assert.deepEqual(
      renumbered.rules.map((x) => x.rule),
      ["FIELD_NO_DELETE"],
    );
    assert.match(renumbered.rules[0].message, /"20".*"response_size".*"SimpleRequest"/);

    // Served but not in the source: a client of the source never calls it, so buf finds nothing.
    const method = byName.get("grpc.testing.TestService.CacheableUnaryCall");
    assert.ok(method);
    assert.equal(method.change, "added");
    assert.equal(method.element, "method");
    assert.equal(method.breaking, false);
    assert.deepEqual(method.rules, []);
    assert.deepEqual(method.against, { file: testPath, line: lineOf(testProto, "service TestService {") });

    // In the source but not on the server: a client that sets it loses it.
    const added = byName.get("grpc.testing.SimpleResponse.note");
    assert.ok(added);
    assert.equal(added.change, "missing");
    assert.deepEqual(added.against, { file: messagesPath, line: lineOf(messages, "string note = 99;") });
    assert.equal(added.breaking, true);
    assert.deepEqual(
      added.rules.map((x) => x.rule),
      ["FIELD_NO_DELETE"],
    );

    const text = await runCli(["drift", server.plainUrl, "--against", source], {
      cwd: work,
      timeoutMs: 120_000,
    });
    assert.equal(text.code, 1);
    const lines = text.stdout.split("\n");
    assert.ok(
      lines.includes(
        `changed/grpc/testing/messages.proto:${lineOf(messages, "response_size = 20")}: breaking: field grpc.testing.SimpleRequest.response_size: number 2 on the server, 20 in the workspace (buf FIELD_NO_DELETE: ${renumbered.rules[0].message})`,
      ),
      text.stdout,
    );
    assert.ok(
      lines.includes(
        `changed/grpc/testing/test.proto:${lineOf(testProto, "service TestService {")}: compatible: method grpc.testing.TestService.CacheableUnaryCall: on the server, not in the workspace`,
      ),
      text.stdout,
    );
    assert.ok(
      lines.some((l) =>
        l.startsWith(
          `changed/grpc/testing/messages.proto:${lineOf(messages, "string note = 99;")}: breaking: field grpc.testing.SimpleResponse.note: in the workspace, not on the server (buf FIELD_NO_DELETE: `,
        ),
      ),
      text.stdout,
    );
    assert.match(
      text.stdout,
      /^3 differences between .*: 2 breaking for clients of the workspace \(buf breaking\), 1 compatible$/m,
    );
  });

  test("only compatible differences exit 2", async () => {
    const source = interopWorkspace("fewer-methods", (files) => {
      files["grpc/testing/test.proto"] = files["grpc/testing/test.proto"].replace(
        /\n[^\n]*rpc CacheableUnaryCall\(SimpleRequest\) returns \(SimpleResponse\);/,
        "",
      );
    });
    const r = await runCli(["drift", server.plainUrl, "--against", source], {
      cwd: work,
      timeoutMs: 120_000,
    });
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.match(
      r.stdout,
      /^1 difference between .*: 0 breaking for clients of the workspace \(buf breaking\), 1 compatible$/m,
    );
  });

  test("the other direction: the source as input, the server as --against", async () => {
    const source = interopWorkspace("fewer-methods-2", (files) => {
      files["grpc/testing/test.proto"] = files["grpc/testing/test.proto"].replace(
        /\n[^\n]*rpc CacheableUnaryCall\(SimpleRequest\) returns \(SimpleResponse\);/,
        "",
      );
    });
    const r = await runCli(["drift", source, "--against", server.plainUrl, "--format", "json"], {
      cwd: work,
      timeoutMs: 120_000,
    });
    assert.equal(r.code, 1, r.stdout + r.stderr);
    const [d] = (JSON.parse(r.stdout) as JsonReport).differences;
    assert.equal(d.change, "missing");
    assert.deepEqual(
      d.rules.map((x) => x.rule),
      ["RPC_NO_DELETE"],
    );
  });
});

describe("drift against our own servers", () => {
  let demo: DemoServer;
  before(async () => {
    demo = await startDemoServer();
  });
  after(() => demo.close());

  test("the connect-node demo server against the examples workspace: no differences", async () => {
    for (const protocol of ["connect", "grpc"]) {
      const r = await runCli(["drift", demo.url, "--against", examplesDir, "--protocol", protocol], {
        cwd: work,
        timeoutMs: 120_000,
      });
      assert.equal(r.code, 0, `${protocol}: ${r.stdout}${r.stderr}`);
      assert.match(r.stdout, /^no differences/m);
    }
  });

  test("a server over TLS with a client certificate: --cacert, -E/--key; without them the failure is exit 3", async () => {
    const pki = await createTestPki(["127.0.0.1", "localhost"]);
    const tls = await startTlsDemoServer(pki, { requestClientCert: true });
    try {
      const url = tls.url.replace("127.0.0.1", "localhost");
      const args = ["drift", url, "--against", examplesDir];
      const ok = await runCli(
        [...args, "--cacert", pki.ca.certPath, "-E", pki.client.certPath, "--key", pki.client.keyPath],
        { cwd: work, timeoutMs: 120_000 },
      );
      assert.equal(ok.code, 0, ok.stdout + ok.stderr);
      assert.match(ok.stdout, /^no differences/m);
      const untrusted = await runCli(args, { cwd: work, timeoutMs: 120_000 });
      assert.equal(untrusted.code, 3, untrusted.stdout);
      assert.match(untrusted.stderr, /^protocall: .*certificate.*\n$/);
    } finally {
      await tls.close();
    }
  });

  test("without --against, a server is compared with the current directory's workspace", async () => {
    const ws = join(work, "workspace-default");
    cpSync(examplesDir, ws, { recursive: true });
    const other = join(ws, "other");
    mkdirSync(other);
    writeFileSync(
      join(other, "other.proto"),
      'syntax = "proto3";\npackage other.v1;\nmessage M {}\nservice S {\n  rpc Get(M) returns (M);\n}\n',
    );
    const r = await runCli(["drift", demo.url, "--format", "json"], { cwd: ws, timeoutMs: 120_000 });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const report = JSON.parse(r.stdout) as JsonReport;
    assert.deepEqual(report.against, { spec: ws, kind: "workspace" });
    assert.equal(report.verdict, "same");

    const empty = join(work, "empty-workspace");
    mkdirSync(empty);
    const none = await runCli(["drift", demo.url], { cwd: empty, timeoutMs: 120_000 });
    assert.equal(none.code, 3);
    assert.equal(
      none.stderr,
      `protocall: no schema of the workspace at ${empty} declares a service that ${demo.url} serves: there are no schemas there; give the source with --against\n`,
    );
  });

  test("the grpc-js server (files named after their package) against its source: PACKAGE rules, no differences", async () => {
    const grpcJs = await startGrpcJsReflectionServer();
    try {
      const root = join(work, "shop");
      mkdirSync(join(root, "shop/v1"), { recursive: true });
      mkdirSync(join(root, "shop/common"), { recursive: true });
      writeFileSync(join(root, "shop/v1/shop.proto"), SHOP_PROTO);
      writeFileSync(join(root, "shop/common/money.proto"), MONEY_PROTO);
      const same = await runCli(["drift", grpcJs.url, "--against", root, "--format", "json"], {
        cwd: work,
        timeoutMs: 120_000,
      });
      assert.equal(same.code, 0, same.stdout + same.stderr);
      const report = JSON.parse(same.stdout) as JsonReport;
      assert.equal(report.rules, "PACKAGE");
      assert.deepEqual(report.differences, []);

      // The source's Money gains a field: missing on the server, breaking.
      const changed = join(work, "shop-changed");
      cpSync(root, changed, { recursive: true });
      writeFileSync(
        join(changed, "shop/common/money.proto"),
        replaceOnce(MONEY_PROTO, "  int64 units = 2;\n", "  int64 units = 2;\n  int32 nanos = 3;\n"),
      );
      const r = await runCli(["drift", grpcJs.url, "--against", changed, "--format", "json"], {
        cwd: work,
        timeoutMs: 120_000,
      });
      assert.equal(r.code, 1, r.stdout + r.stderr);
      const diff = (JSON.parse(r.stdout) as JsonReport).differences;
      assert.equal(diff.length, 1, JSON.stringify(diff));
      assert.equal(diff[0].name, "shop.common.Money.nanos");
      assert.equal(diff[0].breaking, true);
      assert.deepEqual(diff[0].against, {
        file: join(changed, "shop/common/money.proto"),
        line: lineOf(readFileSync(join(changed, "shop/common/money.proto"), "utf8"), "nanos = 3"),
      });
    } finally {
      await grpcJs.close();
    }
  });
});

describe("drift's flags and inputs; what it cannot compare exits 3", () => {
  test("an unreachable server", async () => {
    const r = await runCli(["drift", "http://127.0.0.1:1", "--against", examplesDir], { cwd: work });
    assert.equal(r.code, 3);
    assert.equal(r.stdout, "");
    assert.match(r.stderr, /^protocall: reflection at http:\/\/127\.0\.0\.1:1: .*connection refused.*\n$/);
  });

  test("a server without reflection", async () => {
    const bare = await startDemoServer({ reflection: false });
    try {
      const r = await runCli(["drift", bare.url, "--against", examplesDir], { cwd: work });
      assert.equal(r.code, 3);
      assert.match(r.stderr, /^protocall: reflection at .*\n$/);
    } finally {
      await bare.close();
    }
  });

  test("bad arguments", async () => {
    const missing = await runCli(["drift", examplesDir], { cwd: work });
    assert.equal(missing.code, 3);
    assert.match(missing.stderr, /^protocall: drift needs --against/);
    const two = await runCli(["drift", examplesDir, examplesDir, "--against", examplesDir], { cwd: work });
    assert.equal(two.code, 3);
    assert.match(two.stderr, /drift takes one server URL or schema/);
    const nowhere = await runCli(["drift", join(work, "nope"), "--against", examplesDir], { cwd: work });
    assert.equal(nowhere.code, 3);
    assert.match(nowhere.stderr, /^protocall: schema .*nope does not exist/);
    const format = await runCli(["drift", examplesDir, "--against", examplesDir, "--format", "yaml"], {
      cwd: work,
    });
    assert.equal(format.code, 3);
    assert.match(format.stderr, /--format/);
  });

  test("--rules names buf's category, reported in the JSON", async () => {
    const r = await runCli(
      ["drift", examplesDir, "--against", examplesDir, "--rules", "WIRE", "--format", "json"],
      {
        cwd: work,
        timeoutMs: 120_000,
      },
    );
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as JsonReport;
    assert.equal(report.rules, "WIRE");
    assert.deepEqual(report.input, { spec: examplesDir, kind: "workspace" });
  });

  test("a descriptor set on stdin (-)", async () => {
    const set = readFileSync(await demoDescriptorSet());
    const r = await runCli(["drift", "-", "--against", examplesDir, "--format", "json"], {
      cwd: work,
      stdin: set,
      timeoutMs: 120_000,
    });
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as JsonReport;
    assert.deepEqual(report.input, { spec: "-", kind: "descriptor-set" });
    assert.equal(report.verdict, "same");
  });

  test("--help exits 0 and documents the exit codes", async () => {
    const r = await runCli(["drift", "--help"]);
    assert.equal(r.code, 0);
    assert.match(
      r.stdout,
      /Exit codes: 0 no differences; 1 a difference breaks clients; 2 differences, all compatible;\n3 /,
    );
  });
});
