import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseCurlArgs } from "../../../src/cli/commands/curl-args";
import { ProtocallError } from "../../../src/core/errors";
import { validateCurlOptions } from "../../../src/core/invoke/validate";

const http = "http://localhost:8080/acme.v1.GreetService/Greet";
const https = "https://localhost:8443/acme.v1.GreetService/Greet";

function check(args: string[]) {
  return validateCurlOptions(parseCurlArgs(args).options);
}

function fails(args: string[], pattern: RegExp) {
  assert.throws(
    () => check(args),
    (e: unknown) => {
      assert.ok(e instanceof ProtocallError, String(e));
      assert.match(e.message, pattern);
      assert.ok(!e.message.includes("\n"), "one line");
      assert.equal(e.exitCode, 1);
      return true;
    },
  );
}

describe("validateCurlOptions", () => {
  it("accepts ordinary calls", () => {
    assert.deepEqual(check([http]).warnings.length, 1); // reflection over http implies h2c
    assert.deepEqual(check(["--schema", ".", http]).warnings, []);
    assert.deepEqual(
      check(["--schema", ".", "--protocol", "grpc", "--http2-prior-knowledge", http]).warnings,
      [],
    );
    check(["-k", "--servername", "api", https]);
    check(["--cacert", "ca.pem", "--cert", "c.pem", "--key", "k.pem", https]);
    check(["--list-services", "--schema", "."]);
    check(["--list-methods", "--schema", "."]);
    check(["-H", "", "-H", "x-empty:", http]);
    check(["-H", "Content-Length: 5", "-H", "Connection: close", "-H", "Keep-Alive: 1", http]);
    check(["-d", "@-", "-H", "@-", http]);
    check(["-d", "@f", "-H", "@f", "--reflect-header", "@g", "--reflect-header", "*", http]);
  });

  it("notes implied HTTP/2 prior knowledge for grpc and reflection over http", () => {
    assert.match(
      check(["--schema", ".", "--protocol", "grpc", http]).warnings[0],
      /HTTP\/2 prior knowledge.*gRPC/,
    );
    assert.match(check([http]).warnings[0], /HTTP\/2 prior knowledge.*reflection/);
    assert.deepEqual(check([https]).warnings, []);
  });

  it("requires the URL unless listing without reflection", () => {
    fails([], /^missing the URL: give the method's URL/);
    fails(["--list-services"], /^missing the URL: give the server's base URL/);
    fails(["--schema", "."], /^missing the URL/);
  });

  it("requires http or https", () => {
    fails(["ftp://x/a.B/C"], /scheme "ftp" is not supported; use http or https/);
    fails(["not a url"], /"not a url" is not a valid URL/);
  });

  it("checks the URL's service and method", () => {
    fails([`${http}/`], /should not end with a slash/);
    fails(["http://localhost:8080//Greet"], /two non-empty path components/);
    fails(["http://localhost:8080/Greet"], /two non-empty path components/);
  });

  it("requires a schema when reflection is off", () => {
    fails(["--reflect=false", http], /^--reflect=false needs a schema: give --schema/);
  });

  it("refuses --list-services with --list-methods", () => {
    fails(
      ["--list-services", "--list-methods", "http://x"],
      /--list-services and --list-methods cannot be used together/,
    );
  });

  it("refuses TLS flags with http", () => {
    for (const flags of [
      ["--key", "k", "--cert", "c"],
      ["--cacert", "c"],
      ["--servername", "s"],
      ["-k"],
      ["--insecure=false"],
    ]) {
      fails(
        [...flags, http],
        /TLS flags \(--key, --cert, --cacert, --insecure, --servername\) need an https URL/,
      );
    }
  });

  it("requires --key and --cert together", () => {
    fails(["--key", "k", https], /^--key needs --cert/);
    fails(["-E", "c", https], /^--cert needs --key/);
  });

  it("refuses --insecure with --cacert", () => {
    fails(["-k", "--cacert", "c", https], /--insecure and --cacert cannot be used together/);
  });

  it("refuses --http3: https only, not with --unix-socket, and unsupported by Node", () => {
    fails(["--http3", http], /--http3 needs an https URL/);
    fails(["--http3", "--unix-socket", "/s", https], /--http3 cannot be used with --unix-socket/);
    fails(["--http3", https], /^--http3 is not supported: Node\.js has no QUIC/);
  });

  it("refuses --netrc with --netrc-file", () => {
    fails(["-n", "--netrc-file", "f", http], /--netrc and --netrc-file cannot be used together/);
  });

  it("allows at most one schema from stdin", () => {
    fails(["--schema", "-", "--schema", "-", http], /--schema - is given more than once/);
  });

  it("refuses reflection flags without reflection", () => {
    fails(
      ["--reflect=false", "--schema", ".", "--reflect-header", "a: b", http],
      /--reflect-header and --reflect-protocol need server reflection/,
    );
    fails(["--schema", ".", "--reflect-protocol", "grpc-v1", http], /need server reflection/);
    check(["--schema", ".", "--reflect", "--reflect-protocol", "grpc-v1", http]);
  });

  it("checks protocol values also when the options come from elsewhere", () => {
    const o = parseCurlArgs([http]).options;
    assert.throws(
      () => validateCurlOptions({ ...o, protocol: "http" as never }),
      /invalid --protocol "http"/,
    );
    assert.throws(
      () => validateCurlOptions({ ...o, reflectProtocol: "v9" as never }),
      /invalid --reflect-protocol "v9"/,
    );
  });

  it("checks keepalive and timeouts", () => {
    fails(
      ["--no-keepalive", "--keepalive-time", "5", http],
      /--keepalive-time cannot be used with --no-keepalive/,
    );
    fails(["--keepalive-time", "0", http], /--keepalive-time must be a positive number of seconds, not 0/);
    fails(["--keepalive-time", "-1", http], /--keepalive-time must be a positive/);
    fails(["--connect-timeout", "0", http], /--connect-timeout must be a positive number of seconds/);
    fails(["--timeout", "-5s", http], /--timeout must not be negative/);
  });

  it("checks the data source", () => {
    fails(["-d", "@", http], /^--data @ needs a file name/);
    fails(["-d", "@-", "--schema", "-", http], /--data @- and --schema - cannot both read stdin/);
  });

  it("checks header flags", () => {
    fails(["-H", "@-", "--schema", "-", http], /--header @- and --schema - cannot both read stdin/);
    fails(
      ["--reflect", "--reflect-header", "@-", "--schema", "-", http],
      /--reflect-header @- and --schema - cannot both read stdin/,
    );
    fails(
      ["-d", "@-", "--reflect-header", "@-", http],
      /--data @- and --reflect-header @- cannot both read stdin/,
    );
    fails(
      ["-d", "@f", "--reflect-header", "@f", http],
      /--data and --reflect-header cannot name the same file \(f\)/,
    );
    fails(["-H", "@f", "-H", "@f", http], /--header names the same file more than once \(f\)/);
    fails(
      ["--reflect-header", "@f", "--reflect-header", "@f", http],
      /--reflect-header names the same file more than once/,
    );
    fails(["-H", "@", http], /--header @ needs a file name/);
    fails(
      ["-H", "foo", http],
      /--header value is a malformed header \(it has no ":"\); write it as "name: value"/,
    );
    fails(["-H", "   ", http], /malformed header/);
    fails(["-H", "a b: c", http], /invalid header name "a b"/);
    fails(["-H", ": c", http], /invalid header name ""/);
    fails(["-H", "*", http], /--header value '\*' is not valid/);
    fails(["--reflect-header", "*", "--reflect-header", "*", http], /'\*' is given more than once/);
  });

  it("refuses headers that the protocol owns", () => {
    for (const name of [
      "Accept",
      "accept-encoding",
      "Content-Type",
      "content-encoding",
      "TE",
      "transfer-encoding",
      "grpc-timeout",
      "Grpc-Encoding",
      "connect-protocol-version",
      "Upgrade",
    ]) {
      fails(["-H", `${name}: x`, http], new RegExp(`header "${name}" is set by the RPC protocol`));
    }
    fails(["--reflect-header", "te: trailers", http], /header "te" is set by the RPC protocol/);
  });

  it("notes that --user wins over netrc", () => {
    assert.ok(check(["-u", "a:b", "-n", https]).warnings.some((w) => /--user is given, so netrc/.test(w)));
  });
});
