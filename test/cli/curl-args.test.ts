import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { curlFlags, curlHelp, parseCurlArgs } from "../../src/cli/commands/curl-args";
import { ProtocallError } from "../../src/core/errors";
import { defaultCurlOptions } from "../../src/core/invoke/options";
import { validateCurlOptions } from "../../src/core/invoke/validate";

const url = "http://localhost:8080/acme.v1.GreetService/Greet";

function fails(args: string[], pattern: RegExp) {
  assert.throws(
    () => parseCurlArgs(args),
    (e: unknown) => e instanceof ProtocallError && pattern.test(e.message) && !e.message.includes("\n"),
  );
}

describe("parseCurlArgs", () => {
  it("returns the defaults for a bare URL", () => {
    const { options, help } = parseCurlArgs([url]);
    assert.equal(help, false);
    assert.deepEqual(options, { ...defaultCurlOptions(), url });
  });

  it("takes long flags as --flag value and --flag=value", () => {
    const { options } = parseCurlArgs(["--data", '{"a":1}', "--protocol=grpc", "--output", "out.json", url]);
    assert.equal(options.data, '{"a":1}');
    assert.equal(options.protocol, "grpc");
    assert.equal(options.output, "out.json");
    assert.equal(options.url, url);
  });

  it("takes a value that starts with a dash after a flag that needs one", () => {
    const { options } = parseCurlArgs(["-d", "-", "--user-agent", "--x", url]);
    assert.equal(options.data, "-");
    assert.equal(options.userAgent, "--x");
  });

  it("takes short flags as -d x, -dx and -d=x", () => {
    assert.equal(parseCurlArgs(["-d", "{}", url]).options.data, "{}");
    assert.equal(parseCurlArgs(["-d{}", url]).options.data, "{}");
    assert.equal(parseCurlArgs(["-d={}", url]).options.data, "{}");
    assert.equal(parseCurlArgs(["-A", "ua/1", url]).options.userAgent, "ua/1");
    assert.equal(parseCurlArgs(["-E", "c.pem", url]).options.cert, "c.pem");
    assert.equal(parseCurlArgs(["-u", "a:b", url]).options.user, "a:b");
    assert.equal(parseCurlArgs(["-o", "f", url]).options.output, "f");
  });

  it("combines short bools, and a value-taking short flag last", () => {
    const { options } = parseCurlArgs(["-vkn", url]);
    assert.equal(options.verbose, true);
    assert.equal(options.insecure, true);
    assert.equal(options.netrc, true);
    const b = parseCurlArgs(["-vd{}", url]).options;
    assert.equal(b.verbose, true);
    assert.equal(b.data, "{}");
    const c = parseCurlArgs(["-vH", "a: b", url]).options;
    assert.deepEqual(c.headers, ["a: b"]);
  });

  it("parses bools as --flag, --flag=false and Go's other spellings", () => {
    assert.equal(parseCurlArgs(["--reflect", url]).options.reflect, true);
    assert.equal(parseCurlArgs(["--reflect=false", url]).options.reflect, false);
    assert.equal(parseCurlArgs(["--reflect=0", url]).options.reflect, false);
    assert.equal(parseCurlArgs(["--reflect=T", url]).options.reflect, true);
    assert.equal(parseCurlArgs(["-k=false", url]).options.insecure, false);
    assert.equal(parseCurlArgs([url]).options.insecure, undefined);
    assert.equal(parseCurlArgs([url]).options.reflect, undefined);
    // A bool never takes the next argument as its value.
    const { options } = parseCurlArgs(["--emit-defaults", "false"]);
    assert.equal(options.emitDefaults, true);
    assert.equal(options.url, "false");
  });

  it("refuses a bool with a value that is not a bool", () => {
    fails(["--http2-prior-knowledge=nope", url], /invalid value "nope" for --http2-prior-knowledge/);
  });

  it("collects repeatable flags in order and never splits them at commas", () => {
    const { options } = parseCurlArgs([
      "-H",
      "Accept-Language: en, fr",
      "--header=x-a: 1",
      "--reflect-header",
      "*",
      "--reflect-header",
      "a: b,c",
      "--schema",
      "a,b",
      "--schema=c",
      url,
    ]);
    assert.deepEqual(options.headers, ["Accept-Language: en, fr", "x-a: 1"]);
    assert.deepEqual(options.reflectHeaders, ["*", "a: b,c"]);
    assert.deepEqual(options.schemas, ["a,b", "c"]);
  });

  it("accepts flags after the URL, and -- ends the flags", () => {
    assert.equal(parseCurlArgs([url, "-v"]).options.verbose, true);
    const { options } = parseCurlArgs(["-v", "--", "-notaflag"]);
    assert.equal(options.url, "-notaflag");
    assert.equal(options.verbose, true);
  });

  it("parses float seconds and durations", () => {
    const { options } = parseCurlArgs([
      "--connect-timeout",
      "2.5",
      "--keepalive-time=1e3",
      "--timeout",
      "1m30s",
      url,
    ]);
    assert.equal(options.connectTimeout, 2.5);
    assert.equal(options.keepaliveTime, 1000);
    assert.equal(options.timeoutMs, 90_000);
    assert.equal(parseCurlArgs(["--timeout=250ms", url]).options.timeoutMs, 250);
    assert.equal(parseCurlArgs(["--timeout=0", url]).options.timeoutMs, 0);
    fails(
      ["--connect-timeout", "abc", url],
      /invalid value "abc" for --connect-timeout: it must be a number of seconds/,
    );
    fails(["--connect-timeout", "0x10", url], /--connect-timeout/);
    fails(["--timeout", "5", url], /invalid value "5" for --timeout: it has no unit/);
    fails(["--timeout", "abc", url], /invalid value "abc" for --timeout/);
  });

  it("checks --protocol, trims and lower-cases --reflect-protocol, checks --log-format", () => {
    fails(
      ["--protocol", "GRPC", url],
      /invalid --protocol "GRPC": it must be one of "connect", "grpc", or "grpcweb"/,
    );
    assert.equal(parseCurlArgs(["--protocol", "grpcweb", url]).options.protocol, "grpcweb");
    assert.equal(parseCurlArgs(["--reflect-protocol", " GRPC-V1 ", url]).options.reflectProtocol, "grpc-v1");
    assert.equal(parseCurlArgs(["--reflect-protocol", "", url]).options.reflectProtocol, undefined);
    fails(["--reflect-protocol", "v2", url], /invalid --reflect-protocol "v2"/);
    assert.equal(parseCurlArgs(["--log-format", "json", url]).options.logFormat, "json");
    fails(["--log-format", "xml", url], /invalid --log-format "xml"/);
  });

  it("sets every other flag", () => {
    const { options } = parseCurlArgs([
      "--cacert=ca.pem",
      "--key=k.pem",
      "--cert=c.pem",
      "--servername=api",
      "--unix-socket=/tmp/s",
      "--netrc-file=n",
      "--http2-prior-knowledge",
      "--http3",
      "--no-keepalive",
      "--list-services",
      "--list-methods",
      "--emit-defaults",
      "--debug",
      url,
    ]);
    assert.equal(options.cacert, "ca.pem");
    assert.equal(options.key, "k.pem");
    assert.equal(options.cert, "c.pem");
    assert.equal(options.servername, "api");
    assert.equal(options.unixSocket, "/tmp/s");
    assert.equal(options.netrcFile, "n");
    assert.equal(options.http2PriorKnowledge, true);
    assert.equal(options.http3, true);
    assert.equal(options.noKeepalive, true);
    assert.equal(options.listServices, true);
    assert.equal(options.listMethods, true);
    assert.equal(options.emitDefaults, true);
    assert.equal(options.debug, true);
  });

  it("reports -h and --help", () => {
    assert.equal(parseCurlArgs(["-h"]).help, true);
    assert.equal(parseCurlArgs(["--help", url]).help, true);
    assert.equal(parseCurlArgs(["-vh"]).help, true);
    assert.equal(parseCurlArgs(["--help=false", url]).help, false);
  });

  it("refuses unknown flags, missing values and extra arguments with one line", () => {
    fails(["--bogus", url], /^unknown flag --bogus: run `protocall curl --help`/);
    fails(["-x", url], /^unknown shorthand flag 'x' in -x/);
    fails(["-vx", url], /^unknown shorthand flag 'x' in -vx/);
    fails([url, "-d"], /^flag -d needs a value/);
    fails([url, "--data"], /^flag --data needs a value/);
    fails([url, "--timeout"], /^flag --timeout needs a value \(a duration/);
    fails([url, "extra"], /^too many arguments: expected at most one URL, got 2/);
  });
});

describe("curlHelp", () => {
  const help = curlHelp();

  it("documents every flag with its short form and type", () => {
    for (const f of curlFlags) {
      const left = `${f.short ? `-${f.short}, ` : "    "}--${f.name}${f.kind === "bool" ? "" : ` ${f.kind}`}`;
      assert.ok(help.includes(`  ${left} `), `missing ${left}`);
    }
    assert.match(help, /--keepalive-time float +.*\(default 60\)/);
    assert.match(help, /Global Flags:\n {6}--debug/);
  });

  it("has the examples", () => {
    assert.match(help, /protocall curl http:\/\/localhost:8080\/acme\.v1\.GreetService\/Greet/);
    assert.match(help, /--schema \.\/proto/);
    assert.match(help, /--data @requests\.json/);
    assert.match(help, /-H 'Authorization: Bearer/);
    assert.match(help, /--cacert ca\.pem/);
    assert.match(help, /--netrc https:/);
    assert.match(help, /--list-services http/);
  });

  it("keeps lines at most 100 characters wide", () => {
    for (const line of help.split("\n")) assert.ok(line.length <= 100, line);
  });
});

describe("parseCurlArgs on random input", () => {
  it("returns options or throws a one-line ProtocallError, never anything else", () => {
    let seed = 3;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const pieces = [
      "-",
      "--",
      "-d",
      "-vk",
      "-H",
      "--data=",
      "--timeout",
      "5s",
      "x",
      "=",
      "--reflect=",
      "-k=",
      "-dd",
      "--schema",
      "-E",
      "1e3",
      "--protocol",
      "grpc",
      "--no-such",
      "-Z",
      "@-",
      "http://h/a.B/C",
    ];
    for (let round = 0; round < 2000; round++) {
      const args = Array.from(
        { length: rand(6) },
        () => pieces[rand(pieces.length)] + (rand(4) ? "" : pieces[rand(pieces.length)]),
      );
      try {
        parseCurlArgs(args);
      } catch (e) {
        assert.ok(e instanceof ProtocallError, `${JSON.stringify(args)}: ${e}`);
        assert.ok(!e.message.includes("\n"));
      }
    }
  });
});

describe("curlHelp examples", () => {
  it("are valid command lines", () => {
    const text = curlHelp().replace(/\\\n\s*/g, " ");
    const commands = [...text.matchAll(/\$ protocall curl (.*)/g)].map((m) => m[1].replace(/<<EOM.*/, ""));
    assert.ok(commands.length >= 8, `${commands.length} examples`);
    for (const command of commands) {
      // Split like a shell: whitespace, with '...' quoting.
      const args = [...command.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2]);
      const { options } = parseCurlArgs(args);
      assert.doesNotThrow(() => validateCurlOptions(options), command);
    }
  });
});
