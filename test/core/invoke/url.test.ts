import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ProtocallError } from "../../../src/core/errors";
import { type CurlOptions, defaultCurlOptions } from "../../../src/core/invoke/options";
import { isListMode, parseCurlUrl, usesReflection } from "../../../src/core/invoke/url";

const opts = (o: Partial<CurlOptions>): CurlOptions => ({ ...defaultCurlOptions(), ...o });

describe("parseCurlUrl", () => {
  it("splits service and method off the base URL", () => {
    const u = parseCurlUrl(opts({ url: "http://localhost:8080/acme.v1.GreetService/Greet" }));
    assert.equal(u.baseUrl, "http://localhost:8080");
    assert.equal(u.service, "acme.v1.GreetService");
    assert.equal(u.method, "Greet");
    assert.equal(u.secure, false);
    assert.equal(u.host, "localhost:8080");
    assert.equal(u.hostname, "localhost");
    assert.equal(u.port, 8080);
  });

  it("decodes percent escapes and ignores the query", () => {
    const u = parseCurlUrl(opts({ url: "http://h/a.B/C%61ll?x=1#f" }));
    assert.equal(u.method, "Call");
    assert.equal(u.service, "a.B");
    assert.equal(u.baseUrl, "http://h");
  });

  it("keeps a path prefix in the base URL", () => {
    const u = parseCurlUrl(opts({ url: "https://api.example.com/rpc/v2/acme.v1.GreetService/Greet" }));
    assert.equal(u.baseUrl, "https://api.example.com/rpc/v2");
    assert.equal(u.secure, true);
    assert.equal(u.port, 443);
    assert.equal(u.host, "api.example.com");
  });

  it("keeps an explicit default port in the host (the netrc key)", () => {
    const u = parseCurlUrl(opts({ url: "https://user@API.example.com:443/a.B/C" }));
    assert.equal(u.host, "api.example.com:443");
    assert.equal(u.port, 443);
  });

  it("handles IPv6 hosts", () => {
    const u = parseCurlUrl(opts({ url: "http://[::1]:9000/a.B/C" }));
    assert.equal(u.hostname, "::1");
    assert.equal(u.host, "[::1]:9000");
    assert.equal(u.baseUrl, "http://[::1]:9000");
  });

  it("takes the list-mode URL as the base URL", () => {
    assert.equal(
      parseCurlUrl(opts({ url: "http://h:1/prefix/", listServices: true })).baseUrl,
      "http://h:1/prefix",
    );
    assert.equal(parseCurlUrl(opts({ url: "http://h:1", listMethods: true })).baseUrl, "http://h:1");
    assert.equal(parseCurlUrl(opts({ listMethods: true, schemas: ["."] })).baseUrl, "");
  });

  it("refuses bad URLs with a fix", () => {
    const bad: [Partial<CurlOptions>, RegExp][] = [
      [{}, /missing the URL/],
      [{ url: "ftp://h/a.B/C" }, /scheme "ftp" is not supported/],
      [{ url: "http://[::1/a.B/C" }, /is not a valid URL/],
      [{ url: "http://h/a.B/C/" }, /should not end with a slash/],
      [{ url: "http://h/C" }, /two non-empty path components/],
      [{ url: "http://h/a.B//" }, /should not end with a slash/],
      [{ url: "http://h//C" }, /two non-empty path components/],
      [{ listServices: true }, /missing the URL: give the server's base URL/],
      [{ url: "http://h/a.B/C%zz" }, /"C%zz" has a malformed percent escape/],
    ];
    for (const [o, pattern] of bad) {
      assert.throws(
        () => parseCurlUrl(opts(o)),
        (e: unknown) => e instanceof ProtocallError && pattern.test(e.message),
      );
    }
  });
});

describe("usesReflection / isListMode", () => {
  it("turns reflection off with --schema unless --reflect is explicit", () => {
    assert.equal(usesReflection(opts({})), true);
    assert.equal(usesReflection(opts({ schemas: ["."] })), false);
    assert.equal(usesReflection(opts({ schemas: ["."], reflect: true })), true);
    assert.equal(usesReflection(opts({ reflect: false })), false);
    assert.equal(isListMode(opts({ listMethods: true })), true);
    assert.equal(isListMode(opts({})), false);
  });
});
