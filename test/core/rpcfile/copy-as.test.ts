import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { describe, test } from "node:test";
import { parseCurlArgs } from "../../../src/cli/commands/curl-args";
import { curlFlags } from "../../../src/core/invoke/curl-flags";
import { type CurlOptions, defaultCurlOptions } from "../../../src/core/invoke/options";
import {
  copyAsBufCurl,
  copyAsGrpcurl,
  copyAsProtocallCurl,
  curlArguments,
  shellQuote,
} from "../../../src/core/rpcfile/copy-as";

/** Splits a command line as sh does (runs the real shell, which prints each argument NUL-terminated). */
function shellSplit(command: string): string[] {
  const r = spawnSync("sh", ["-c", `printf '%s\\0' ${command.replace(/^\S+/, "")}`], { encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  return [command.split(" ")[0], ...r.stdout.split("\0").slice(0, -1)];
}

const everything: string[] = [
  "--protocol",
  "grpcweb",
  "-H",
  'Authorization: Bearer it\'s "quoted" $HOME `x`',
  "-H",
  "Accept-Language: en, fr",
  "-d",
  '{"text": "line\\nnext", "emoji": "😀"}\n{"a": 1}',
  "--emit-defaults",
  "-o",
  "/tmp/out dir/r.json",
  "--schema",
  "/p/demo.binpb",
  "--schema",
  "buf.build/acme/x",
  "--reflect",
  "--reflect-header",
  "*",
  "--reflect-header",
  "x-r: 1",
  "--reflect-protocol",
  "grpc-v1alpha",
  "--http2-prior-knowledge",
  "--unix-socket",
  "/tmp/s.sock",
  "--connect-timeout",
  "0.25",
  "--keepalive-time",
  "30",
  "--timeout",
  "1m30.5s",
  "--cacert",
  "/c/ca.pem",
  "--cert",
  "/c/client.pem",
  "--key",
  "/c/client.key",
  "--insecure=false",
  "--servername",
  "api.test",
  "--user",
  "me:pw",
  "--netrc-file",
  "/n/.netrc",
  "--user-agent",
  "ua/1",
  "--verbose",
  "--debug",
  "--log-format",
  "json",
  "https://127.0.0.1:8443/api/demo.v1.DemoService/Sum",
];

describe("copy as protocall curl and buf curl", () => {
  test("curlArguments parse back to the same options, for every field", () => {
    const o = parseCurlArgs(everything).options;
    assert.deepEqual(parseCurlArgs(curlArguments(o)).options, o);
    const defaults = parseCurlArgs(["http://h/s.S/M"]).options;
    assert.deepEqual(curlArguments(defaults), ["http://h/s.S/M"]);
    const other = parseCurlArgs([
      "-k",
      "--no-keepalive",
      "--http3",
      "--list-services",
      "-n",
      "--reflect=false",
      "--",
      "-odd",
    ]).options;
    assert.deepEqual(parseCurlArgs(curlArguments(other)).options, other);
  });

  test("every flag of the table survives options → command line → options", () => {
    const url = "http://h:1/s.S/M";
    // Candidate values by kind; a flag takes the first its own parser accepts and that differs from
    // its default, so a flag added to the table is covered without a change here.
    const candidates: Record<string, string[]> = {
      bool: ["true", "false"],
      string: [
        "grpc",
        "grpc-v1alpha",
        "json",
        "it's a value, with = and spaces",
        "data=./in put.bin",
        "64KiB",
        "oauth2 client_credentials token-url=https://id.example/token client-id=a client-secret='b c'",
      ],
      strings: ["x-a: 1, 2"],
      float: ["0.25"],
      duration: ["1m30.5s", "0"],
    };
    const defaults = defaultCurlOptions();
    let covered = 0;
    for (const flag of curlFlags) {
      if (flag.name === "help") {
        assert.equal(flag.field, undefined);
        continue;
      }
      assert.ok(flag.field, `--${flag.name} names the option it sets`);
      const field = flag.field;
      let tried = 0;
      for (const raw of candidates[flag.kind]) {
        let o: CurlOptions;
        try {
          o = parseCurlArgs([`--${flag.name}=${raw}`, url]).options;
        } catch {
          continue;
        }
        if (JSON.stringify(o[field]) === JSON.stringify(defaults[field])) continue;
        tried++;
        const args = curlArguments(o);
        assert.ok(
          args.some((arg) => arg.startsWith(`--${flag.name}`) || (flag.short && arg === `-${flag.short}`)),
          `--${flag.name}=${raw} is written: ${args.join(" ")}`,
        );
        assert.deepEqual(parseCurlArgs(args).options, o, `--${flag.name}=${raw} → ${args.join(" ")}`);
        assert.deepEqual(
          parseCurlArgs(shellSplit(copyAsProtocallCurl(o).command).slice(2)).options,
          o,
          `--${flag.name}=${raw} through a shell`,
        );
      }
      assert.ok(tried > 0, `no candidate value sets --${flag.name}`);
      covered++;
    }
    assert.equal(covered, curlFlags.length - 1);
  });

  test("the copied command line, split by a real shell, gives the same options", () => {
    const o = parseCurlArgs(everything).options;
    const copied = copyAsProtocallCurl(o);
    assert.deepEqual(copied.notes, []);
    const argv = shellSplit(copied.command);
    assert.deepEqual(argv.slice(0, 2), ["protocall", "curl"]);
    assert.deepEqual(parseCurlArgs(argv.slice(2)).options, o);
  });

  test("shell quoting leaves safe words alone and single-quotes the rest", () => {
    assert.equal(shellQuote("http://h:1/a.B/C"), "http://h:1/a.B/C");
    assert.equal(shellQuote("a b"), "'a b'");
    assert.equal(shellQuote("it's"), "'it'\\''s'");
    assert.equal(shellQuote(""), "''");
  });

  test("buf curl: same flags, CSV-quoted repeatable values, HTTP/2 prior knowledge spelled out over http", () => {
    const o = parseCurlArgs([
      "--protocol",
      "grpc",
      "-H",
      'a: x, "y"',
      "-H",
      "b: 1",
      "http://h:1/s.S/M",
    ]).options;
    const b = copyAsBufCurl(o);
    assert.deepEqual(b.notes, []);
    const argv = shellSplit(b.command);
    assert.deepEqual(argv.slice(0, 2), ["buf", "curl"]);
    assert.deepEqual(parseCurlArgs(argv.slice(2)).options, {
      ...o,
      headers: ['"a: x, ""y"""', "b: 1"],
      http2PriorKnowledge: true,
    });
    // With --schema and no reflection over http/1.1, nothing is added.
    const plain = parseCurlArgs(["--schema", "x.binpb", "http://h:1/s.S/M"]).options;
    assert.deepEqual(parseCurlArgs(shellSplit(copyAsBufCurl(plain).command).slice(2)).options, plain);
  });

  test("--proxy becomes the variable buf reads (buf has no --proxy flag)", () => {
    const o = parseCurlArgs([
      "--proxy",
      "http://u:p@proxy:3128",
      "--schema",
      "x.binpb",
      "https://h:1/s.S/M",
    ]).options;
    const b = copyAsBufCurl(o);
    const env = /^HTTPS_PROXY=(\S+) buf curl /.exec(b.command);
    assert.ok(env, b.command);
    // The shell sets the variable to the proxy URL.
    const set = spawnSync(
      "sh",
      ["-c", `${b.command.replace(/ buf curl .*$/, "")} sh -c 'printf %s "$HTTPS_PROXY"'`],
      {
        encoding: "utf8",
      },
    );
    assert.equal(set.stdout, "http://u:p@proxy:3128");
    const argv = shellSplit(b.command.slice(env[0].length - "buf curl ".length));
    const { proxy, ...rest } = o;
    assert.equal(proxy, "http://u:p@proxy:3128");
    assert.deepEqual(parseCurlArgs(argv.slice(2)).options, rest);
    const plain = copyAsBufCurl(
      parseCurlArgs(["--proxy", "p:1", "--schema", "x", "http://h:1/s.S/M"]).options,
    );
    assert.match(plain.command, /^HTTP_PROXY='?p:1'? buf curl /);
  });

  test("--auth is left out of buf curl and grpcurl (neither can fetch a token), with a note saying so", () => {
    const o = parseCurlArgs([
      "--auth",
      "oauth2 client_credentials token-url=https://id.example/token client-id=a client-secret=b",
      "--schema",
      "x.binpb",
      "https://h:1/s.S/M",
    ]).options;
    const b = copyAsBufCurl(o);
    assert.ok(!b.command.includes("--auth"), b.command);
    assert.match(b.notes.join("\n"), /buf curl cannot fetch an OAuth2 token \(--auth\)/);
    const g = copyAsGrpcurl(o);
    assert.ok(!g.command.includes("oauth2"), g.command);
    assert.match(g.notes.join("\n"), /grpcurl cannot fetch an OAuth2 token/);
    assert.match(copyAsProtocallCurl(o).command, /--auth /);
  });
});

describe("copy as grpcurl", () => {
  const grpcurl = (args: string[]) => {
    const c = copyAsGrpcurl(parseCurlArgs(args).options);
    return { argv: shellSplit(c.command.replace(/ [<>] .*$/, "")), command: c.command, notes: c.notes };
  };

  test("plain http: -plaintext, headers as -rpc-header, data, host:port and service/method", () => {
    const r = grpcurl([
      "--protocol",
      "grpc",
      "-H",
      "Authorization: Bearer x",
      "-d",
      '{"name": "w"}',
      "--timeout",
      "2500ms",
      "--connect-timeout",
      "3",
      "--keepalive-time",
      "20",
      "--emit-defaults",
      "-v",
      "http://localhost:8080/demo.v1.GreetService/Greet",
    ]);
    assert.deepEqual(r.argv, [
      "grpcurl",
      "-plaintext",
      "-rpc-header",
      "Authorization: Bearer x",
      "-d",
      '{"name": "w"}',
      "-emit-defaults",
      "-max-time",
      "2.5",
      "-connect-timeout",
      "3",
      "-keepalive-time",
      "20",
      "-v",
      "localhost:8080",
      "demo.v1.GreetService/Greet",
    ]);
    assert.deepEqual(r.notes, []);
  });

  test("https with TLS flags, Host as -authority, User-Agent, reflection headers, default port", () => {
    const r = grpcurl([
      "--protocol",
      "grpc",
      "-k",
      "--cacert",
      "/ca.pem",
      "--cert",
      "/c.pem",
      "--key",
      "/c.key",
      "--servername",
      "api.test",
      "-H",
      "Host: api.test",
      "-H",
      "x-a: 1",
      "-A",
      "me/1",
      "--reflect-header",
      "*",
      "--reflect-header",
      "x-r: 2",
      "https://example.com/demo.v1.GreetService/Greet",
    ]);
    assert.deepEqual(r.argv, [
      "grpcurl",
      "-insecure",
      "-cacert",
      "/ca.pem",
      "-cert",
      "/c.pem",
      "-key",
      "/c.key",
      "-servername",
      "api.test",
      "-authority",
      "api.test",
      "-H",
      "x-a: 1",
      "-reflect-header",
      "x-r: 2",
      "-user-agent",
      "me/1",
      "example.com:443",
      "demo.v1.GreetService/Greet",
    ]);
  });

  test("schemas: .proto with -import-path and -proto, descriptor sets with -protoset, directories noted", () => {
    const r = grpcurl([
      "--protocol",
      "grpc",
      "--schema",
      "/p/demo/v1/greet.proto",
      "--schema",
      "/p/set.binpb",
      "--schema",
      "/p/dir",
      "http://h:1/s.S/M",
    ]);
    assert.deepEqual(r.argv, [
      "grpcurl",
      "-plaintext",
      "-import-path",
      "/p/demo/v1",
      "-proto",
      "greet.proto",
      "-protoset",
      "/p/set.binpb",
      "-import-path",
      "/p/dir",
      "h:1",
      "s.S/M",
    ]);
    assert.equal(r.notes.length, 1);
    assert.match(r.notes[0], /each \.proto file under \/p\/dir named with -proto/);
  });

  test("unix sockets, listing, file data and output, and notes for what grpcurl lacks", () => {
    const r = grpcurl([
      "--unix-socket",
      "/tmp/s.sock",
      "--list-services",
      "--user",
      "me",
      "--no-keepalive",
      "http://h/api",
    ]);
    assert.deepEqual(r.argv, ["grpcurl", "-plaintext", "-unix", "/tmp/s.sock", "list"]);
    assert.deepEqual(
      r.notes.map((n) => n.slice(0, 28)),
      [
        "grpcurl speaks only gRPC; th",
        "grpcurl cannot prompt for a ",
        "grpcurl cannot turn TCP keep",
        "grpcurl cannot call a server",
      ],
    );
    const f = copyAsGrpcurl(
      parseCurlArgs(["--protocol", "grpc", "-d", "@/in put.json", "-o", "out.json", "http://h:1/s.S/M"])
        .options,
    );
    assert.equal(f.command, "grpcurl -plaintext -d @ h:1 s.S/M < '/in put.json' > out.json");
    const basic = copyAsGrpcurl(
      parseCurlArgs(["--protocol", "grpc", "-u", "me:pw", "http://h:1/s.S/M"]).options,
    );
    assert.match(basic.command, / -H 'Authorization: Basic bWU6cHc='/);
    // An Authorization header of the RPC's own leaves --user to reflection only, and the reverse.
    const own = copyAsGrpcurl(
      parseCurlArgs(["--protocol", "grpc", "-u", "me:pw", "-H", "Authorization: x", "http://h:1/s.S/M"])
        .options,
    );
    assert.match(
      own.command,
      /-rpc-header 'Authorization: x' -reflect-header 'Authorization: Basic bWU6cHc='/,
    );
    const ownReflect = copyAsGrpcurl(
      parseCurlArgs([
        "--protocol",
        "grpc",
        "-u",
        "me:pw",
        "--reflect-header",
        "Authorization: r",
        "http://h:1/s.S/M",
      ]).options,
    );
    assert.match(
      ownReflect.command,
      /-reflect-header 'Authorization: r' -rpc-header 'Authorization: Basic bWU6cHc='/,
    );
  });

  test("only documented grpcurl flags are produced", () => {
    const documented = new Set([
      "-plaintext",
      "-insecure",
      "-cacert",
      "-cert",
      "-key",
      "-servername",
      "-H",
      "-rpc-header",
      "-reflect-header",
      "-d",
      "-max-time",
      "-connect-timeout",
      "-keepalive-time",
      "-proto",
      "-protoset",
      "-import-path",
      "-emit-defaults",
      "-unix",
      "-authority",
      "-user-agent",
      "-v",
    ]);
    const o: CurlOptions = parseCurlArgs(everything).options;
    for (const options of [o, { ...o, protocol: "grpc" as const, unixSocket: undefined }]) {
      const argv = shellSplit(copyAsGrpcurl(options).command.replace(/ [<>] .*$/, ""));
      for (const a of argv.slice(1))
        if (a.startsWith("-") && !a.startsWith("-{")) assert.ok(documented.has(a), a);
    }
  });
});
