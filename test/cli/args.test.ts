// The argument helper every command uses: pflag's rules, typed values and defaults, --help from the
// same table, and one-line usage errors that say what is wrong, where, and how to fix it.
import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { describe, it } from "node:test";
import { defineFlags, flagsHelp, parseArgs, parseSize, runSubcommand } from "../../src/cli/args";
import type { CliContext } from "../../src/cli/context";
import { ProtocallError } from "../../src/core/errors";

const flags = defineFlags({
  host: { kind: "string", value: "HOST", default: "127.0.0.1", help: "address to bind" },
  port: { kind: "int", value: "PORT", min: 0, max: 65535, default: 0, help: "port" },
  "max-body": { kind: "int", value: "BYTES", min: 1, help: "largest body" },
  interval: { kind: "duration", min: 1, default: 5000, help: "time between batches" },
  "idle-timeout": { kind: "duration", min: 0, help: "idle time; 0: never" },
  "max-store": { kind: "size", help: "store limit" },
  tls: { kind: "bool", help: "serve https" },
  insecure: { kind: "bool", short: "k", help: "do not verify" },
  data: { kind: "string", short: "d", value: "FILE", help: "the data" },
  tag: { kind: "strings", value: "TAG", help: "a tag" },
  from: { kind: "string", choices: ["json", "binary"], help: "input format" },
});

const command = "protocall demo";
const parse = (args: string[], positionals = 0) => parseArgs(args, flags, { command, positionals });

function fails(args: string[], pattern: RegExp, positionals = 0) {
  assert.throws(
    () => parse(args, positionals),
    (e: unknown) => {
      assert.ok(e instanceof ProtocallError, String(e));
      assert.match(e.message, pattern);
      assert.ok(!e.message.includes("\n"), "one line");
      return true;
    },
  );
}

describe("parseArgs", () => {
  it("gives typed values with defaults: bools false, repeatable flags [], others their default or undefined", () => {
    const { values, positionals, help, given } = parse([]);
    assert.deepEqual(values, {
      host: "127.0.0.1",
      port: 0,
      interval: 5000,
      tls: false,
      insecure: false,
      tag: [],
    });
    assert.deepEqual(positionals, []);
    assert.equal(help, false);
    assert.equal(given.size, 0);
  });

  it("reads values with pflag's rules", () => {
    const { values, given } = parse([
      "--host=0.0.0.0",
      "--port",
      "8443",
      "--interval",
      "1m30s",
      "--tls",
      "-k=false",
      "-d",
      "-",
      "--tag",
      "a,b",
      "--tag=c",
      "--from",
      "binary",
      "--max-body",
      "1000",
    ]);
    assert.equal(values.host, "0.0.0.0");
    assert.equal(values.port, 8443);
    assert.equal(values.interval, 90_000);
    assert.equal(values.tls, true);
    assert.equal(values.insecure, false);
    assert.equal(values.data, "-", "a value may start with a dash");
    assert.deepEqual(values.tag, ["a,b", "c"], "repeatable, never split at commas");
    assert.equal(values.from, "binary");
    assert.equal(values["max-body"], 1000);
    assert.deepEqual([...given].sort(), [
      "data",
      "from",
      "host",
      "insecure",
      "interval",
      "max-body",
      "port",
      "tag",
      "tls",
    ]);
    assert.equal(parse(["-kd@x"]).values.data, "@x", "short bools combine, a value-taking short flag last");
    assert.equal(parse(["-d=x"]).values.data, "x");
    assert.equal(parse(["-dx"]).values.data, "x");
    assert.equal(parse(["--tls=0"]).values.tls, false);
  });

  it("takes positionals anywhere, and everything after --", () => {
    const { values, positionals } = parse(["a", "--tls", "b", "--", "--port", "-k"], 4);
    assert.deepEqual(positionals, ["a", "b", "--port", "-k"]);
    assert.equal(values.tls, true);
    assert.equal(values.port, 0);
  });

  it("refuses an unknown flag, suggesting the closest one and naming the command's help", () => {
    fails(["--prot", "1"], /^unknown flag --prot \(did you mean --port\?\): run `protocall demo --help`/);
    fails(["--insecur"], /^unknown flag --insecur \(did you mean --insecure\?\)/);
    fails(["--token", "secret"], /^unknown flag --token: run `protocall demo --help` for the list of flags$/);
    fails(["-x"], /^unknown shorthand flag 'x' in -x: run `protocall demo --help`/);
    fails(["-kx"], /^unknown shorthand flag 'x' in -kx/);
  });

  it("never echoes the value after an unknown flag", () => {
    assert.throws(
      () => parse(["--token", "s3cr3t"]),
      (e: Error) => !e.message.includes("s3cr3t"),
    );
  });

  it("refuses a flag without its value: what it needs and how to write it", () => {
    fails(["--port"], /^flag --port needs a value \(a whole number from 0 to 65535\): write --port PORT$/);
    fails(["-d"], /^flag -d needs a value \(a string\): write -d FILE$/);
    fails(["--interval"], /^flag --interval needs a value \(a duration such as 5s, 1m30s or 250ms\)/);
  });

  it("refuses bad values, saying what the value must be", () => {
    fails(["--port", "http"], /^invalid value "http" for --port: it must be a whole number from 0 to 65535$/);
    fails(
      ["--port", "70000"],
      /^invalid value "70000" for --port: it must be a whole number from 0 to 65535$/,
    );
    fails(["--port", "1.5"], /invalid value "1\.5" for --port/);
    fails(["--max-body", "0"], /^invalid value "0" for --max-body: it must be a positive whole number$/);
    fails(
      ["--interval", "5"],
      /^invalid value "5" for --interval: it has no unit; write 5s for seconds or 5ms for milliseconds$/,
    );
    fails(["--interval", "0s"], /^invalid value "0s" for --interval: it must be at least 1ms$/);
    fails(["--tls=maybe"], /^invalid value "maybe" for --tls: write --tls=true or --tls=false$/);
    fails(
      ["--from", "jsno"],
      /^invalid value "jsno" for --from: it must be json or binary \(did you mean json\?\)$/,
    );
  });

  it("reads sizes as bytes or with KiB, MiB, GiB; refuses other text and zero", () => {
    assert.equal(parseSize("1048576"), 1048576);
    assert.equal(parseSize("64KiB"), 64 * 1024);
    assert.equal(parseSize("4MiB"), 4 * 1024 ** 2);
    assert.equal(parseSize("1.5 GB"), 1.5 * 1024 ** 3);
    assert.equal(parseSize("2k"), 2048);
    assert.equal(parseSize("lots"), undefined);
    assert.equal(parse(["--max-store", "256MiB"]).values["max-store"], 256 * 1024 ** 2);
    assert.equal(parse([]).values["max-store"], undefined);
    fails(
      ["--max-store", "1x"],
      /^invalid value "1x" for --max-store: it is not a size; write bytes, or 64KiB, 256MiB, 1GiB$/,
    );
    fails(["--max-store", "0"], /^invalid value "0" for --max-store: it must be more than zero bytes$/);
    fails(
      ["--max-store"],
      /^flag --max-store needs a value \(a size in bytes, or with KiB, MiB or GiB such as 64KiB\): write --max-store SIZE$/,
    );
  });

  it("a duration flag with min 0 takes 0 and refuses a negative duration", () => {
    assert.equal(parse(["--idle-timeout", "0"]).values["idle-timeout"], 0);
    assert.equal(parse(["--idle-timeout=1m30s"]).values["idle-timeout"], 90_000);
    fails(["--idle-timeout=-1s"], /^invalid value "-1s" for --idle-timeout: it must not be negative$/);
  });

  it("refuses extra positionals, quoting them", () => {
    fails(["stray"], /^protocall demo takes no arguments, got "stray": give every value after its flag/);
    fails(["a", "b"], /^too many arguments for protocall demo: expected at most 1, got "a", "b"/, 1);
  });

  it("refuses a missing required flag, naming it", () => {
    const spec = defineFlags({
      id: { kind: "string", value: "ID", required: true, help: "the webhook's id" },
    });
    assert.throws(
      () => parseArgs([], spec, { command: "protocall webhook delete" }),
      (e: Error) =>
        e.message ===
        "protocall webhook delete needs --id, the webhook's id: write --id ID (see `protocall webhook delete --help`)",
    );
    const { values } = parseArgs(["--id", "7"], spec, { command: "x" });
    const id: string = values.id; // typed as always set
    assert.equal(id, "7");
  });

  it("answers -h and --help anywhere before --, even when other arguments are wrong", () => {
    assert.equal(parse(["--help"]).help, true);
    assert.equal(parse(["--port", "x", "-h"]).help, true);
    assert.equal(parse(["--bogus", "--help"]).help, true);
    assert.equal(parse(["--help=false"]).help, false);
    fails(["--", "--help"], /takes no arguments/);
  });
});

describe("flagsHelp", () => {
  it("lists every flag from the table with its short form, value, default, and -h last", () => {
    const text = flagsHelp(flags);
    const lines = text.trimEnd().split("\n");
    assert.match(text, /^ {2}--host HOST +address to bind \(default 127\.0\.0\.1\)$/m);
    assert.match(text, /^ {2}--interval DURATION +time between batches \(default 5s\)$/m);
    assert.match(text, /^ {2}-k, --insecure +do not verify$/m);
    assert.match(text, /^ {2}--tag TAG +a tag; repeatable$/m);
    assert.match(text, /^ {2}--from json\|binary +input format$/m);
    assert.match(lines.at(-1) ?? "", /^ {2}-h, --help +show this help$/);
    const column = lines[0].indexOf("address");
    for (const line of lines) assert.equal(line.slice(column - 2, column), "  ", `aligned: ${line}`);
  });

  it("wraps long descriptions under the description column", () => {
    const text = flagsHelp(
      defineFlags({ store: { kind: "string", value: "FILE", help: "word ".repeat(40).trim() } }),
      60,
    );
    const lines = text.split("\n").filter((l) => l.includes("word"));
    assert.ok(lines.length > 1);
    const column = lines[0].indexOf("word");
    for (const line of lines) {
      assert.ok(line.length <= 60, line);
      assert.equal(line.indexOf("word"), column);
    }
  });
});

function context() {
  const out: string[] = [];
  const err: string[] = [];
  const sink = (into: string[]) =>
    new Writable({
      write(chunk, _encoding, done) {
        into.push(String(chunk));
        done();
      },
    });
  const ctx = { stdout: sink(out), stderr: sink(err), env: {}, cwd: "/" } as unknown as CliContext;
  return { ctx, out, err };
}

describe("runSubcommand", () => {
  const subcommands = {
    list: async (args: string[]) => (args.length === 0 ? 0 : 3),
    replay: async (args: string[]) => Number(args[0]),
  };
  const options = { command: "protocall listen", usage: "Usage: protocall listen ...\n", subcommands };

  it("runs the named subcommand with the rest of the arguments", async () => {
    const { ctx } = context();
    assert.equal(await runSubcommand(["list"], ctx, options), 0);
    assert.equal(await runSubcommand(["replay", "7"], ctx, options), 7);
  });

  it("prints the usage: on stderr with exit 1 when nothing is given, on stdout for help", async () => {
    const none = context();
    assert.equal(await runSubcommand([], none.ctx, options), 1);
    assert.deepEqual(none.err, ["Usage: protocall listen ...\n"]);
    for (const help of ["-h", "--help", "help"]) {
      const c = context();
      assert.equal(await runSubcommand([help], c.ctx, options), 0);
      assert.deepEqual(c.out, ["Usage: protocall listen ...\n"]);
    }
  });

  it("refuses an unknown subcommand with the closest name and the list", async () => {
    const { ctx } = context();
    await assert.rejects(
      runSubcommand(["lsit"], ctx, options),
      /^ProtocallError: unknown subcommand "lsit" of protocall listen \(did you mean list\?\): use list or replay$/,
    );
  });

  it("sends flags and no arguments to the fallback when there is one", async () => {
    const { ctx } = context();
    const fallback = async (args: string[]) => 40 + args.length;
    assert.equal(await runSubcommand([], ctx, { ...options, fallback }), 40);
    assert.equal(await runSubcommand(["--tls", "x"], ctx, { ...options, fallback }), 42);
    assert.equal(await runSubcommand(["list"], ctx, { ...options, fallback }), 0);
    await assert.rejects(
      runSubcommand(["serve"], ctx, { ...options, fallback }),
      /unknown subcommand "serve"/,
    );
  });
});
