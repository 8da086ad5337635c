// `protocall check`: the language server's diagnostics from the command line. A buf module built by
// the real buf; a field and a method renamed in the .proto file turn a clean request file into
// errors with "did you mean"; the lines printed equal what the language server (dist/server.js over
// stdio, the same settings) publishes for the same file; exit codes, directories, --schema.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, describe, test } from "node:test";
import { pathToFileURL } from "node:url";
import type { Diagnostic } from "vscode-languageserver-protocol";
import { LspClient } from "../server/lsp-client";
import { runCli } from "../support/cli";

const usersProto = (field: string, method: string) => `syntax = "proto3";

package acme.v1;

service UserService {
  rpc ${method}(GetUserRequest) returns (User);
}

message GetUserRequest {
  string id = 1;
}

message User {
  string id = 1;
  string ${field} = 2;
  int32 age = 3;
}
`;

const requests = `@host = http://127.0.0.1:1

### Get a user
# @assert message.fullname == "Ada Lovelace"
# @assert message.age >= 18
{{host}}/acme.v1.UserService/GetUser

{"id": "u1"}
`;

let root: string;

function write(rel: string, text: string): string {
  const path = join(root, rel);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  return path;
}

before(() => {
  root = mkdtempSync(join(tmpdir(), "protocall-check-"));
  mkdirSync(join(root, ".git"));
  write("buf.yaml", "version: v2\nmodules:\n  - path: proto\n");
  write("proto/acme/v1/users.proto", usersProto("fullname", "GetUser"));
  write("requests/users.rpc", requests);
});

after(() => rmSync(root, { recursive: true, force: true }));

const check = (args: string[]) => runCli(["check", ...args], { cwd: root, timeoutMs: 120_000 });

/**
 * The language server's diagnostics of a file, as check prints them (without the file name), once
 * they are `expected` (the server publishes again when its workspace build is done, which on a
 * loaded machine comes well after the first publish), or the last published after 120 s.
 */
async function serverLines(path: string, expected: readonly string[]): Promise<string[]> {
  const client = await LspClient.start({ rootDir: root, configuration: { reflection: false } });
  const names = ["", "error", "warning", "info", "hint"];
  const lines = (diagnostics: Diagnostic[]) =>
    [...diagnostics]
      .sort(
        (a, b) =>
          a.range.start.line - b.range.start.line || a.range.start.character - b.range.start.character,
      )
      .map(
        (d) =>
          `${d.range.start.line + 1}:${d.range.start.character + 1}: ${names[d.severity ?? 1]}: ${d.message}`,
      );
  try {
    const uri = pathToFileURL(path).href;
    client.open(uri, readFileSync(path, "utf8"));
    await client.diagnosticsFor(uri, 1, 90_000);
    const latest = () => lines(client.published(uri).at(-1)?.diagnostics ?? []);
    const deadline = Date.now() + 240_000;
    while (JSON.stringify(latest()) !== JSON.stringify(expected) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return latest();
  } finally {
    await client.close();
  }
}

describe("protocall check", { timeout: 600_000 }, () => {
  test("--help lists the flags from the flag table; protocall --help lists check", async () => {
    const r = await check(["--help"]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Usage:\n {2}protocall check \[FILES\|DIRS\] \[flags\]/);
    assert.match(r.stdout, /\n {2}--schema PATH +a schema for every file/);
    assert.match(r.stdout, /\n {2}--no-build +do not build the workspace's \.proto files/);
    assert.match(r.stdout, /\n {2}-v, --verbose +print what is built/);
    assert.match(r.stdout, /\n {2}-h, --help +show this help\n$/);
    const top = await runCli(["--help"]);
    assert.match(top.stdout, /\n {2}check +Check \.rpc request files against their schema/);
  });

  test("a request file that matches the schema: no output, exit 0", async () => {
    const r = await check(["requests"]);
    assert.equal(r.stdout, "");
    assert.equal(r.stderr, "1 file checked: 0 errors, 0 warnings\n");
    assert.equal(r.code, 0);
  });

  test("after a field and a method are renamed: errors with the names meant, as the language server reports them", async () => {
    write("proto/acme/v1/users.proto", usersProto("full_name", "GetUserV2"));
    try {
      const r = await check([]);
      assert.equal(r.code, 1, r.stderr);
      const lines = r.stdout.trimEnd().split("\n");
      assert.deepEqual(lines, [
        'requests/users.rpc:6:30: error: unknown method "GetUser" of service acme.v1.UserService; did you mean "GetUserV2"? (its methods: GetUserV2)',
      ]);
      assert.equal(r.stderr, "1 file checked: 1 error, 0 warnings\n");
      const expected = lines.map((l) => l.replace(/^requests\/users\.rpc:/, ""));
      assert.deepEqual(await serverLines(join(root, "requests/users.rpc"), expected), expected);

      // With the method's new name, the renamed field is next.
      const fixed = write("requests/users.rpc", requests.replace("GetUser", "GetUserV2"));
      const again = await check(["requests/users.rpc"]);
      assert.equal(again.code, 1, again.stderr);
      const againLines = again.stdout.trimEnd().split("\n");
      assert.equal(againLines.length, 1, again.stdout);
      assert.match(
        againLines[0],
        /^requests\/users\.rpc:4:\d+: error: .*fullname.*fullName/,
        "the assertion's path names the field meant",
      );
      const againExpected = againLines.map((l) => l.replace(/^requests\/users\.rpc:/, ""));
      assert.deepEqual(await serverLines(fixed, againExpected), againExpected);
    } finally {
      write("proto/acme/v1/users.proto", usersProto("fullname", "GetUser"));
      write("requests/users.rpc", requests);
    }
  });

  test("directories are searched for .rpc files (not node_modules or dot directories); warnings do not fail", async () => {
    write(
      "requests/nested/more.rpc",
      "### Same\nhttp://127.0.0.1:1/acme.v1.UserService/GetUser\n### Same\nhttp://127.0.0.1:1/acme.v1.UserService/GetUser\n",
    );
    write("node_modules/pkg/ignored.rpc", "not a request\n{");
    write(".hidden/ignored.rpc", "not a request\n{");
    try {
      const r = await check(["."]);
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.equal(
        r.stdout,
        'requests/nested/more.rpc:3:5: warning: another request is also named "Same" (line 1); `protocall run --name` runs the first\n',
      );
      assert.equal(r.stderr, "2 files checked: 0 errors, 1 warning\n");
    } finally {
      rmSync(join(root, "requests/nested"), { recursive: true });
    }
  });

  test("--schema and --no-build: the schema named, not the workspace's build", async () => {
    const other = write("other/acme/v1/users.proto", usersProto("fullname", "GetUserV2"));
    const r = await check(["requests", "--no-build", "--schema", join(root, "other")]);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(
      r.stdout,
      /unknown method "GetUser" of service acme\.v1\.UserService; did you mean "GetUserV2"\?/,
    );
    rmSync(dirname(dirname(dirname(other))), { recursive: true });
  });

  test("no schema found: an error per request, what was tried, exit 1; --allow-no-schema allows it", async () => {
    const bare = mkdtempSync(join(tmpdir(), "protocall-check-bare-"));
    try {
      mkdirSync(join(bare, ".git"));
      writeFileSync(
        join(bare, "a.rpc"),
        '### Greet\nhttp://127.0.0.1:1/demo.v1.GreetService/Greet\n\n{"name": "x"}\n',
      );
      const r = await runCli(["check", "a.rpc"], { cwd: bare, timeoutMs: 120_000 });
      assert.equal(r.code, 1, r.stdout + r.stderr);
      assert.equal(
        r.stdout,
        'a.rpc:2:1: error: no schema found for service "demo.v1.GreetService": its method, body and assertions were not checked (what was tried is printed at the end; --allow-no-schema allows this)\n',
      );
      assert.match(
        r.stderr,
        /^protocall check: no schema was found for 1 request\. Tried: --schema \(none given\); workspace builds \(no buf\.yaml, buf\.work\.yaml or \.proto files in .*\); descriptor sets \(no \*\.binpb in .*\); .*server reflection \(off: --reflect turns it on\)\. .*--allow-no-schema\.\n/,
      );
      assert.match(r.stderr, /\n1 file checked: 1 error, 0 warnings\n$/);
      const allowed = await runCli(["check", "a.rpc", "--allow-no-schema"], {
        cwd: bare,
        timeoutMs: 120_000,
      });
      assert.equal(allowed.code, 0, allowed.stderr);
      assert.equal(allowed.stdout, "");
      assert.match(
        allowed.stderr,
        /^note: no schema was found for 1 request \(allowed by --allow-no-schema\)/,
      );
      assert.match(allowed.stderr, /\n1 file checked: 0 errors, 0 warnings\n$/);
      const help = await check(["--help"]);
      assert.match(help.stdout, /\n {2}--allow-no-schema +do not fail when no schema is found/);
    } finally {
      rmSync(bare, { recursive: true, force: true });
    }
  });

  test("syntax errors, a missing path and an unknown flag", async () => {
    write(
      "broken/bad.rpc",
      '### A\n# @assert message.age ~= 3\nhttp://127.0.0.1:1/acme.v1.UserService/GetUser\n\n{"id": \n',
    );
    try {
      const r = await check(["broken"]);
      assert.equal(r.code, 1);
      assert.match(r.stdout, /^broken\/bad\.rpc:2:\d+: error: .*\n/m);
      assert.match(r.stdout, /^broken\/bad\.rpc:5:\d+: error: .*JSON/m);
    } finally {
      rmSync(join(root, "broken"), { recursive: true });
    }
    const missing = await check(["nope"]);
    assert.equal(missing.code, 1);
    assert.equal(missing.stderr, "protocall: cannot read nope: no such file or directory\n");
    const flag = await check(["--bogus"]);
    assert.equal(flag.code, 1);
    assert.match(flag.stderr, /unknown flag --bogus/);
    const misspelled = await check(["--no-buld"]);
    assert.equal(misspelled.code, 1);
    assert.match(misspelled.stderr, /^protocall: unknown flag --no-buld \(did you mean --no-build\?\): /);
  });
});
