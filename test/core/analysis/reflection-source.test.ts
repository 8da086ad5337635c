// The language server's reflection opens a target as a call does (the pipeline's describeTarget):
// keepalive, TLS, the Unix socket, -u / netrc credentials and the User-Agent all reach it, and its
// cache key is made from those settings.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { after, test } from "node:test";
import { reflectionTarget } from "../../../src/core/analysis/reflection-source";
import { type CurlOptions, defaultCurlOptions } from "../../../src/core/invoke/options";
import { describeTarget } from "../../../src/core/invoke/target";
import { repoRoot } from "../../support/cli";

/** The installed Connect version, which the User-Agent names (as connect-es does). */
const connectVersion: string = JSON.parse(
  readFileSync(join(repoRoot, "node_modules/@connectrpc/connect/package.json"), "utf8"),
).version;

const dir = mkdtempSync(join(tmpdir(), "protocall-lsp-reflection-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const options = (more: Partial<CurlOptions>): CurlOptions => ({
  ...defaultCurlOptions(),
  url: "https://api.example.com:8443/acme.v1.ShopService/PlaceOrder",
  ...more,
});

test("the connection is a call's: keepalive, TLS, Unix socket; only the connect timeout is the editor's", async () => {
  const o = options({
    keepaliveTime: 5,
    cacert: "ca.pem",
    servername: "shop.internal",
    unixSocket: "/run/shop.sock",
    headers: ["Host: shop.example.com"],
  });
  const editor = await reflectionTarget(o, "https://api.example.com:8443", dir, { timeoutMs: 2000 });
  const call = await describeTarget(o, {
    cwd: dir,
    env: {},
    stdin: Readable.from([]),
    stdinIsTTY: false,
    homedir: dir,
  });
  assert.deepEqual(editor.settings.connection, { ...call.connection, connectTimeoutMs: 2000 });
  assert.equal(editor.settings.connection.keepaliveMs, 5000);
  assert.equal(editor.settings.connection.authority, "shop.example.com");
  // A changed setting is a new source.
  const other = await reflectionTarget({ ...o, keepaliveTime: 6 }, "https://api.example.com:8443", dir, {
    timeoutMs: 2000,
  });
  assert.notEqual(other.key, editor.key);
});

test("reflection carries -u or netrc credentials and the User-Agent, as a call's reflection does", async () => {
  const base = "https://api.example.com:8443";
  const header = (t: Awaited<ReturnType<typeof reflectionTarget>>, name: string) =>
    t.settings.reflection.headers.filter(([n]) => n.toLowerCase() === name).map(([, v]) => v);
  const basic = `Basic ${Buffer.from("ada:pw").toString("base64")}`;

  const user = await reflectionTarget(options({ user: "ada:pw" }), base, dir, { timeoutMs: 2000 });
  assert.deepEqual(header(user, "authorization"), [basic]);
  assert.match(
    header(user, "user-agent")[0],
    new RegExp(`^connect-es/${connectVersion.replaceAll(".", "\\.")} protocall/\\d+\\.\\d+\\.\\d+`),
  );

  writeFileSync(join(dir, "netrc"), "machine api.example.com:8443 login ada password pw\n");
  const netrc = await reflectionTarget(options({ netrcFile: "netrc" }), base, dir, { timeoutMs: 2000 });
  assert.deepEqual(header(netrc, "authorization"), [basic]);

  // The request's own headers go with reflection when it sets no @reflect-header; -A is the agent.
  const own = await reflectionTarget(options({ headers: ["x-team: a"], userAgent: "mine/1" }), base, dir, {
    timeoutMs: 2000,
  });
  assert.deepEqual(header(own, "x-team"), ["a"]);
  assert.deepEqual(header(own, "user-agent"), ["mine/1"]);

  // Credentials that need a terminal are a clear problem, not a silent omission.
  await assert.rejects(
    reflectionTarget(options({ user: "ada" }), base, dir, { timeoutMs: 2000 }),
    /cannot prompt for the password of --user ada/,
  );
});
