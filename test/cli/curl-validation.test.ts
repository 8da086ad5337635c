// `protocall curl` refuses the same command lines as the real `buf curl`, before sending anything:
// one line on stderr, nothing on stdout, exit code 1. And it has exactly buf's flags.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, describe, it } from "node:test";
import { curlFlags } from "../../src/cli/commands/curl-args";

const repo = resolve(__dirname, "../..");
const cli = join(repo, "dist/cli.js");
const buf = join(repo, "node_modules/@bufbuild/buf-linux-x64/bin/buf");
const cwd = mkdtempSync(join(tmpdir(), "protocall-curl-validation-"));
after(() => rmSync(cwd, { recursive: true, force: true }));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(file: string, args: string[]): Promise<Run> {
  return new Promise((ok) => {
    // A usage error ends at once; the bound only stops a hang, and allows for a loaded machine (both
    // programs start 4 at a time here, and 10 s was exceeded with the load at 10 times the cores).
    const child = execFile(
      file,
      args,
      { cwd, timeout: 60_000, env: { ...process.env, HOME: cwd, NETRC: "" } },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === "number" ? err.code : -1) : 0;
        ok({ code, stdout, stderr });
      },
    );
    child.stdin?.end();
  });
}

const http = "http://127.0.0.1:9/acme.v1.GreetService/Greet";
const https = "https://127.0.0.1:9/acme.v1.GreetService/Greet";

const cases: [string, string[], RegExp][] = [
  ["no URL", [], /missing the URL/],
  ["scheme", ["ftp://127.0.0.1/a.B/C"], /scheme "ftp" is not supported/],
  ["trailing slash", [`${http}/`], /should not end with a slash/],
  ["empty service", ["http://127.0.0.1:9//Greet"], /two non-empty path components/],
  ["--reflect=false without --schema", ["--reflect=false", http], /needs a schema/],
  [
    "list flags together",
    ["--list-services", "--list-methods", "http://127.0.0.1:9"],
    /cannot be used together/,
  ],
  ["--key over http", ["--key", "k", "--cert", "c", http], /need an https URL/],
  ["-k over http", ["-k", http], /need an https URL/],
  ["--insecure=false over http", ["--insecure=false", http], /need an https URL/],
  ["--servername over http", ["--servername", "x", http], /need an https URL/],
  ["--key alone", ["--key", "k", https], /--key needs --cert/],
  ["--cert alone", ["-E", "c", https], /--cert needs --key/],
  ["-k with --cacert", ["-k", "--cacert", "c", https], /--insecure and --cacert/],
  ["--http3 over http", ["--http3", http], /--http3 needs an https URL/],
  [
    "--http3 with --unix-socket",
    ["--http3", "--unix-socket", "/s", https],
    /--http3 cannot be used with --unix-socket/,
  ],
  ["--netrc with --netrc-file", ["-n", "--netrc-file", "f", http], /--netrc and --netrc-file/],
  ["two stdin schemas", ["--schema", "-", "--schema", "-", http], /--schema - is given more than once/],
  [
    "reflect header without reflection",
    ["--reflect=false", "--schema", "x", "--reflect-header", "a: b", http],
    /need server reflection/,
  ],
  [
    "reflect protocol without reflection",
    ["--schema", "x", "--reflect-protocol", "grpc-v1", http],
    /need server reflection/,
  ],
  ["bad protocol", ["--protocol", "foo", http], /invalid --protocol "foo"/],
  ["bad reflect protocol", ["--reflect-protocol", "foo", http], /invalid --reflect-protocol "foo"/],
  [
    "keepalive with --no-keepalive",
    ["--no-keepalive", "--keepalive-time", "5", http],
    /--keepalive-time cannot be used with --no-keepalive/,
  ],
  ["keepalive 0", ["--keepalive-time", "0", http], /--keepalive-time must be a positive/],
  ["connect timeout 0", ["--connect-timeout", "0", http], /--connect-timeout must be a positive/],
  ["-d @", ["-d", "@", http], /--data @ needs a file name/],
  ["stdin data and schema", ["-d", "@-", "--schema", "-", http], /cannot both read stdin/],
  ["stdin data and reflect headers", ["-d", "@-", "--reflect-header", "@-", http], /cannot both read stdin/],
  [
    "data file as reflect header file",
    ["-d", "@f", "--reflect-header", "@f", http],
    /cannot name the same file/,
  ],
  ["header file twice", ["-H", "@f", "-H", "@f", http], /names the same file more than once/],
  ["malformed header", ["-H", "foo", http], /malformed header \(it has no ":"\)/],
  ["blank header", ["-H", "   ", http], /malformed header/],
  ["'*' in -H", ["-H", "*", http], /'\*' is not valid/],
  ["'*' twice", ["--reflect-header", "*", "--reflect-header", "*", http], /'\*' is given more than once/],
  [
    "protocol-owned header",
    ["-H", "content-type: x", http],
    /header "content-type" is set by the RPC protocol/,
  ],
  ["grpc- header", ["-H", "grpc-timeout: 1S", http], /header "grpc-timeout" is set by the RPC protocol/],
  ["reflect te header", ["--reflect-header", "te: x", http], /header "te" is set by the RPC protocol/],
  ["unknown flag", ["--bogus", http], /unknown flag --bogus/],
  ["unknown short flag", ["-x", http], /unknown shorthand flag 'x'/],
  ["missing value", [http, "-d"], /flag -d needs a value/],
  ["bad bool", ["--reflect=maybe", http], /invalid value "maybe" for --reflect/],
  ["bad float", ["--connect-timeout", "abc", http], /invalid value "abc" for --connect-timeout/],
  ["duration without unit", ["--timeout", "5", http], /invalid value "5" for --timeout: it has no unit/],
  ["two URLs", [http, http], /too many arguments/],
  ["--user without a terminal", ["--user", "ada", http], /cannot prompt for the password of --user ada/],
];

describe("protocall curl refuses what buf curl refuses", { concurrency: 4 }, () => {
  for (const [name, args, pattern] of cases) {
    it(name, async () => {
      const [ours, theirs] = await Promise.all([
        run(process.execPath, [cli, "curl", ...args]),
        run(buf, ["curl", ...args]),
      ]);
      assert.equal(theirs.code, 1, `buf curl ${args.join(" ")} exits 1: ${theirs.stderr}`);
      assert.equal(ours.code, 1, ours.stderr);
      assert.equal(ours.stdout, "");
      assert.match(ours.stderr, /^protocall: [^\n]+\n$/);
      assert.match(ours.stderr, pattern);
    });
  }
});

describe("protocall curl has buf curl's flags", () => {
  it("lists the same long and short flags in --help (plus protocall's --proxy, which buf lacks)", async () => {
    const [ours, theirs] = await Promise.all([
      run(process.execPath, [cli, "curl", "--help"]),
      run(buf, ["curl", "--help"]),
    ]);
    assert.equal(ours.code, 0);
    const flagsOf = (help: string) =>
      [...help.matchAll(/^ {2}(?:-(\w), )? {0,4}--([a-z0-9-]+)(?: (\w+))?/gm)]
        .map((m) => `${m[1] ?? ""}/${m[2]}/${m[3] ?? "bool"}`)
        .sort();
    // Every flag of buf's, and besides them only the flags the table marks as protocall's own.
    const own = new Set(curlFlags.filter((f) => f.protocallOnly).map((f) => f.name));
    const shared = flagsOf(ours.stdout).filter((f) => !own.has(f.split("/")[1]));
    assert.deepEqual(shared, flagsOf(theirs.stdout));
    assert.equal(flagsOf(ours.stdout).length, curlFlags.length);
  });
});
