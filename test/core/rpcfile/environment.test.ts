import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import {
  environmentLayers,
  environmentNames,
  findWorkspaceRoot,
  loadDotenv,
  parseDotenv,
  privateCompanion,
  readEnvironmentFiles,
  selectEnvironment,
} from "../../../src/core/rpcfile/environment";

const root = mkdtempSync(join(tmpdir(), "protocall-env-"));
after(() => rmSync(root, { recursive: true, force: true }));

function write(path: string, text: string): string {
  const full = join(root, path);
  mkdirSync(join(full, ".."), { recursive: true });
  writeFileSync(full, text);
  return full;
}

describe("environments", () => {
  const shared = write(
    "ws/protocall.env.json",
    JSON.stringify({
      $shared: { version: "v1", host: "http://shared" },
      dev: { host: "http://localhost:8080", port: 8080, tls: false },
      prod: { host: "https://api.example.com" },
    }),
  );
  write(
    "ws/protocall.env.private.json",
    JSON.stringify({
      $shared: { version: "v2", token: "shared-secret" },
      dev: { token: "dev-secret" },
      local: {},
    }),
  );

  test("a private value overrides a shareable one; an environment's value beats $shared", () => {
    const files = readEnvironmentFiles(shared);
    assert.deepEqual(selectEnvironment(files, "dev"), {
      version: "v2",
      host: "http://localhost:8080",
      port: "8080",
      tls: "false",
      token: "dev-secret",
    });
    assert.deepEqual(selectEnvironment(files, "prod"), {
      version: "v2",
      host: "https://api.example.com",
      token: "shared-secret",
    });
    assert.deepEqual(selectEnvironment(files, undefined), {
      version: "v2",
      host: "http://shared",
      token: "shared-secret",
    });
    assert.deepEqual(environmentNames(files), ["dev", "local", "prod"]);
  });

  test("in layers: the environment's own values, and the $shared defaults (file variables go between)", () => {
    const files = readEnvironmentFiles(shared);
    assert.deepEqual(environmentLayers(files, "dev"), {
      selected: { host: "http://localhost:8080", port: "8080", tls: "false", token: "dev-secret" },
      shared: { version: "v2", host: "http://shared", token: "shared-secret" },
    });
    assert.deepEqual(environmentLayers(files, undefined).selected, {});
    assert.throws(() => environmentLayers(files, "nope"), /environment "nope" is not defined/);
  });

  test("an unknown environment names the known ones; without files it says to create one", () => {
    assert.throws(
      () => selectEnvironment(readEnvironmentFiles(shared), "staging"),
      /environment "staging" is not defined in .*protocall\.env\.json; defined: dev, local, prod/,
    );
    assert.throws(
      () => selectEnvironment(readEnvironmentFiles(join(root, "none/protocall.env.json")), "dev"),
      /there is no protocall\.env\.json/,
    );
    assert.deepEqual(
      selectEnvironment(readEnvironmentFiles(join(root, "none/protocall.env.json")), undefined),
      {},
    );
  });

  test("invalid files are errors naming the file", () => {
    const bad = write("bad/protocall.env.json", "{ nope");
    assert.throws(() => readEnvironmentFiles(bad), /bad\/protocall\.env\.json is not valid JSON/);
    // A file that is not JSON at all (a .env given by mistake) is placed, not quoted: it may hold secrets.
    const dotenv = write("dotenv/protocall.env.json", "\nTOKEN=s3cr3t-value-1234\n");
    assert.throws(
      () => readEnvironmentFiles(dotenv),
      (err: Error) => {
        assert.match(
          err.message,
          /is not valid JSON \(line 2, column 1: unexpected "T": expected a JSON value\)/,
        );
        assert.doesNotMatch(err.message, /s3cr3t|TOKEN=/);
        return true;
      },
    );
    const arr = write("arr/protocall.env.json", "[]");
    assert.throws(() => readEnvironmentFiles(arr), /must hold a JSON object of environments/);
    const nested = write("nested/protocall.env.json", '{"dev": {"a": {"b": 1}}}');
    assert.throws(() => readEnvironmentFiles(nested), /variable "a" of environment "dev" must be a string/);
    const notObj = write("notobj/protocall.env.json", '{"dev": 3}');
    assert.throws(() => readEnvironmentFiles(notObj), /environment "dev" must be an object/);
  });

  test("the private companion of any environment file", () => {
    assert.equal(privateCompanion("/a/protocall.env.json"), "/a/protocall.env.private.json");
    assert.equal(privateCompanion("/a/envs.JSON"), "/a/envs.private.JSON");
    assert.equal(privateCompanion("/a/envs"), "/a/envs.private");
  });
});

describe(".env files", () => {
  test("KEY=value, export, quotes, escapes in double quotes, comments", () => {
    assert.deepEqual(
      parseDotenv(
        "# comment\nA=1\nexport B = two words \nC=\"x\\ny # not a comment\"\nD='single # kept'\nE=value # comment\n bad line\nF=\n",
      ),
      { A: "1", B: "two words", C: "x\ny # not a comment", D: "single # kept", E: "value", F: "" },
    );
  });

  test("the .env next to the file overrides the one at the workspace root", () => {
    write("dot/.env", "A=root\nB=root\n");
    write("dot/sub/.env", "B=near\n");
    const rpc = write("dot/sub/x.rpc", "");
    assert.deepEqual(loadDotenv(rpc, join(root, "dot")), { A: "root", B: "near" });
    assert.deepEqual(loadDotenv(write("dot/y.rpc", ""), join(root, "dot")), { A: "root", B: "root" });
  });

  test("the workspace root: nearest protocall.env.json, else nearest .git, else the file's directory", () => {
    write("r1/protocall.env.json", "{}");
    mkdirSync(join(root, "r1/.git"), { recursive: true });
    mkdirSync(join(root, "r1/a/.git"), { recursive: true });
    const deep = write("r1/a/b/c.rpc", "");
    assert.equal(findWorkspaceRoot(deep), join(root, "r1"));
    const noEnv = write("r2/a/b/c.rpc", "");
    mkdirSync(join(root, "r2/a/.git"), { recursive: true });
    assert.equal(findWorkspaceRoot(noEnv), join(root, "r2/a"));
    assert.equal(
      findWorkspaceRoot("/x/y/z.rpc", () => false),
      "/x/y",
    );
  });
});
