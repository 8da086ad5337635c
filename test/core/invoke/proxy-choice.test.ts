// Which proxy a URL goes through: Go's http.ProxyFromEnvironment rules (buf's), plus ALL_PROXY and
// --proxy, and the clear errors for proxy URLs that cannot work.
import assert from "node:assert/strict";
import { test } from "node:test";
import { chooseProxy, withProxyOverride } from "../../../src/core/invoke/proxy-choice";

const pick = (url: string, env: NodeJS.ProcessEnv, flag?: string) => chooseProxy(new URL(url), flag, env);

test("https URLs take HTTPS_PROXY, http URLs HTTP_PROXY; upper case first, then lower case, then ALL_PROXY", () => {
  const env = { HTTPS_PROXY: "http://s:1", HTTP_PROXY: "http://h:2", https_proxy: "http://ls:3" };
  assert.deepEqual(pick("https://api.example.com", env), { url: "http://s:1", from: "HTTPS_PROXY" });
  assert.deepEqual(pick("http://api.example.com", env), { url: "http://h:2", from: "HTTP_PROXY" });
  assert.deepEqual(pick("https://a.example", { https_proxy: "http://ls:3" }), {
    url: "http://ls:3",
    from: "https_proxy",
  });
  assert.deepEqual(pick("http://a.example", { ALL_PROXY: "p:8" }), { url: "http://p:8", from: "ALL_PROXY" });
  assert.equal(pick("http://a.example", { HTTPS_PROXY: "http://s:1" }), undefined);
  assert.equal(pick("http://a.example", { HTTP_PROXY: "http://h:2", REQUEST_METHOD: "GET" }), undefined);
});

test("a proxy without a scheme is http, with the scheme's default port; credentials are kept", () => {
  assert.equal(pick("http://a.example", { HTTP_PROXY: "proxy.corp" })?.url, "http://proxy.corp:80");
  assert.equal(
    pick("http://a.example", { HTTP_PROXY: "https://u:p%40ss@proxy.corp" })?.url,
    "https://u:p%40ss@proxy.corp:443",
  );
});

test("--proxy replaces the variables", () => {
  assert.deepEqual(pick("https://a.example", { HTTPS_PROXY: "http://s:1" }, "http://flag:9"), {
    url: "http://flag:9",
    from: "--proxy",
  });
});

test("localhost and loopback literals are never proxied", () => {
  const env = { HTTP_PROXY: "http://h:2", HTTPS_PROXY: "http://h:2" };
  for (const url of ["http://localhost:8080", "http://127.0.0.1:1", "http://127.5.5.5", "https://[::1]:443"])
    assert.equal(pick(url, env), undefined, url);
  assert.ok(pick("http://0.0.0.0:1", env));
  assert.ok(pick("http://localhost.example:1", env));
  assert.equal(pick("http://localhost", env, "http://flag:1"), undefined);
});

test("NO_PROXY: *, names and their subdomains, .subdomains only, ports, IPs and CIDR ranges", () => {
  const proxied = (url: string, noProxy: string) =>
    pick(url, { HTTP_PROXY: "http://h:2", NO_PROXY: noProxy }) !== undefined;
  assert.equal(proxied("http://a.example", "*"), false);
  assert.equal(proxied("http://example.com", "example.com"), false);
  assert.equal(proxied("http://api.example.com", "example.com"), false);
  assert.equal(proxied("http://notexample.com", "example.com"), true);
  assert.equal(proxied("http://example.com", ".example.com"), true);
  assert.equal(proxied("http://api.example.com", ".example.com"), false);
  assert.equal(proxied("http://api.example.com", "*.example.com"), false);
  assert.equal(proxied("http://api.example.com:8080", "example.com:8080"), false);
  assert.equal(proxied("http://api.example.com:9090", "example.com:8080"), true);
  assert.equal(proxied("http://API.Example.com", " other.org , EXAMPLE.COM "), false);
  assert.equal(proxied("http://10.1.2.3", "10.1.2.3"), false);
  assert.equal(proxied("http://10.1.2.3", "10.0.0.0/8"), false);
  assert.equal(proxied("http://11.1.2.3", "10.0.0.0/8"), true);
  assert.equal(proxied("http://[2001:db8::1]:80", "2001:db8::/32"), false);
  assert.equal(pick("http://a.example", { HTTP_PROXY: "http://h:2", no_proxy: "a.example" }), undefined);
});

test("proxy URLs that cannot work are clear errors, the password hidden", () => {
  assert.throws(
    () => pick("http://a.example", { HTTP_PROXY: "socks5://u:secret@h:1080" }),
    /^ProtocallError: HTTP_PROXY socks5:\/\/u:\[redacted\]@h:1080: socks5 proxies are not supported; give an http:\/\/ or https:\/\/ proxy/,
  );
  assert.throws(() => pick("http://a.example", {}, "http://[bad"), /--proxy http:\/\/\[bad: not a proxy URL/);
});

test("the editor's http.proxy replaces the variables and http.noProxy replaces NO_PROXY, by the same rule", () => {
  const env = { https_proxy: "http://env:1", NO_PROXY: "a.example", no_proxy: "b.example" };
  const editor = withProxyOverride(env, { proxy: "http://editor:3128", noProxy: ["c.example", " "] });
  assert.deepEqual(pick("https://x.example", editor), { url: "http://editor:3128", from: "HTTPS_PROXY" });
  assert.equal(pick("http://api.c.example", editor), undefined);
  assert.ok(pick("http://a.example", editor), "http.noProxy replaces NO_PROXY");
  // Empty settings: the environment decides.
  const unchanged = withProxyOverride(env, { proxy: "", noProxy: [] });
  assert.deepEqual(unchanged, env);
  assert.deepEqual(pick("https://x.example", unchanged), { url: "http://env:1", from: "https_proxy" });
  assert.equal(pick("https://a.example", unchanged), undefined);
});

test("PROTOCALL_PROXY_STRICT_SSL=false (the editor's http.proxyStrictSSL) turns off checking the proxy's certificate", () => {
  assert.equal(pick("http://a.example", { HTTP_PROXY: "https://p:1" })?.strictSSL, undefined);
  assert.equal(
    pick("http://a.example", { HTTP_PROXY: "https://p:1", PROTOCALL_PROXY_STRICT_SSL: "false" })?.strictSSL,
    false,
  );
  assert.equal(
    pick("http://a.example", { HTTP_PROXY: "https://p:1", PROTOCALL_PROXY_STRICT_SSL: "true" })?.strictSSL,
    undefined,
  );
  const editor = withProxyOverride({}, { proxy: "https://p:1", strictSSL: false });
  assert.equal(pick("https://a.example", editor)?.strictSSL, false);
  assert.equal(withProxyOverride({}, { strictSSL: true }).PROTOCALL_PROXY_STRICT_SSL, undefined);
});
