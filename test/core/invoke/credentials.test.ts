import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { after, describe, it } from "node:test";
import { ProtocallError } from "../../../src/core/errors";
import { applyCredentials } from "../../../src/core/invoke/credentials";
import type { HeaderList } from "../../../src/core/invoke/headers";
import type { InputIo } from "../../../src/core/invoke/io";
import { type CurlOptions, defaultCurlOptions } from "../../../src/core/invoke/options";

const dir = mkdtempSync(join(tmpdir(), "protocall-cred-"));
after(() => rmSync(dir, { recursive: true, force: true }));
const home = join(dir, "home");
writeFileSync(
  join(dir, "netrc"),
  "machine localhost:8443 login ada password s3cret\nmachine localhost login plain password p\n",
);
writeFileSync(
  join(dir, "default-netrc"),
  "machine other login x password y\ndefault login anon password guest\n",
);
writeFileSync(join(dir, "colon-netrc"), "\nmachine localhost:8443 login a:b password c\n");
require("node:fs").mkdirSync(home);
writeFileSync(join(home, ".netrc"), "machine localhost:8443 login home password h\n");

const basic = (s: string) => `Basic ${Buffer.from(s).toString("base64")}`;
const url = "https://localhost:8443/acme.v1.GreetService/Greet";

function io(extra: Partial<InputIo> = {}): InputIo {
  return { cwd: dir, env: {}, stdin: Readable.from([]), stdinIsTTY: false, homedir: home, ...extra };
}

async function apply(o: Partial<CurlOptions>, headers: HeaderList = [], i = io()): Promise<HeaderList> {
  await applyCredentials(headers, { ...defaultCurlOptions(), url, ...o }, i);
  return headers;
}

describe("applyCredentials", () => {
  it("adds nothing without credentials flags", async () => {
    assert.deepEqual(await apply({}), []);
  });

  it("sends --user name:password as basic authorization (split at the first colon)", async () => {
    assert.deepEqual(await apply({ user: "ada:pa:ss" }), [["Authorization", basic("ada:pa:ss")]]);
  });

  it("lets an Authorization header win over --user and netrc", async () => {
    const h = await apply({ user: "ada:x", netrcFile: "netrc" }, [["authorization", "Bearer t"]]);
    assert.deepEqual(h, [["authorization", "Bearer t"]]);
  });

  it("lets --user win over netrc", async () => {
    assert.deepEqual(await apply({ user: "u:p", netrcFile: "netrc" }), [["Authorization", basic("u:p")]]);
  });

  it("lets a User-Agent header win over -A, and sends -A otherwise", async () => {
    assert.deepEqual(await apply({ userAgent: "mine/1" }), [["User-Agent", "mine/1"]]);
    assert.deepEqual(await apply({ userAgent: "né" }), [["User-Agent", "n\u00c3\u00a9"]]);
    assert.deepEqual(await apply({ userAgent: "mine/1" }, [["user-agent", "hdr/2"]]), [
      ["user-agent", "hdr/2"],
    ]);
  });

  it("prompts for the password of --user name, once for RPC and reflection headers", async () => {
    const prompts: string[] = [];
    const i = io({
      stdinIsTTY: true,
      promptPassword: async (p) => {
        prompts.push(p);
        return "typed";
      },
    });
    const o = { ...defaultCurlOptions(), url, user: "ada" };
    const rpc: HeaderList = [];
    const reflect: HeaderList = [];
    await applyCredentials(rpc, o, i);
    await applyCredentials(reflect, o, i);
    assert.deepEqual(rpc, [["Authorization", basic("ada:typed")]]);
    assert.deepEqual(reflect, rpc);
    assert.deepEqual(prompts, ["Enter host password for user 'ada': "]);
  });

  it("fails for --user name without a terminal", async () => {
    await assert.rejects(
      apply({ user: "ada" }),
      (e: unknown) =>
        e instanceof ProtocallError &&
        /cannot prompt for the password of --user ada: standard input is not a terminal; give --user ada:PASSWORD/.test(
          e.message,
        ),
    );
  });

  it("reads --netrc-file by host including the port", async () => {
    assert.deepEqual(await apply({ netrcFile: "netrc" }), [["Authorization", basic("ada:s3cret")]]);
    assert.deepEqual(await apply({ netrcFile: "netrc", url: "http://localhost/a.B/C" }), [
      ["Authorization", basic("plain:p")],
    ]);
  });

  it("uses the default entry", async () => {
    assert.deepEqual(await apply({ netrcFile: join(dir, "default-netrc") }), [
      ["Authorization", basic("anon:guest")],
    ]);
  });

  it("reads ~/.netrc with -n, or the file in $NETRC", async () => {
    assert.deepEqual(await apply({ netrc: true }), [["Authorization", basic("home:h")]]);
    assert.deepEqual(await apply({ netrc: true }, [], io({ env: { NETRC: "netrc" } })), [
      ["Authorization", basic("ada:s3cret")],
    ]);
  });

  it("sends no credentials when netrc has no entry for the host or cannot be read, and says why", async () => {
    const cases: [Partial<CurlOptions>, string][] = [
      [{ netrc: true, url: "https://localhost:9999/a.B/C" }, `"${join(home, ".netrc")}"`],
      [{ netrcFile: "netrc", url: "https://elsewhere/a.B/C" }, `"netrc"`],
      [{ netrcFile: "nope" }, `"nope"`],
      [{ netrcFile: "." }, `"."`],
    ];
    for (const [o, file] of cases) {
      const headers: HeaderList = [];
      const note = await applyCredentials(headers, { ...defaultCurlOptions(), url, ...o }, io());
      assert.deepEqual(headers, []);
      const host = new URL(o.url ?? url).host;
      assert.equal(note, `Couldn't find host ${host} in the file ${file}; using no credentials`);
    }
  });

  it("fails on a login with a colon", async () => {
    await assert.rejects(
      apply({ netrcFile: "colon-netrc" }),
      /colon-netrc:2: the login "a:b" contains a colon/,
    );
  });
});
