// One function turns the compiler settings into the options of every workspace build (the language
// server's and the editor's Send fallback): protoc when the settings say so, found on PATH unless a
// path is given, and a clear error when there is none.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { buildWorkspace, type CompilerRunner, runCompiler } from "../../../src/core/schema/compiler";
import { findOnPath } from "../../../src/core/schema/find-buf";
import { workspaceBuildOptions } from "../../../src/core/schema/workspace-build-options";

const temp = mkdtempSync(join(tmpdir(), "protocall-build-options-"));
after(() => rmSync(temp, { recursive: true, force: true }));

test("the settings become build options: buf by default, protoc when asked (default: on PATH)", () => {
  assert.deepEqual(workspaceBuildOptions({}), { bufPath: undefined });
  assert.deepEqual(workspaceBuildOptions({ bufPath: "/opt/buf" }), { bufPath: "/opt/buf" });
  assert.deepEqual(workspaceBuildOptions({ compiler: "buf", protocPath: "/opt/protoc" }), {
    bufPath: undefined,
  });
  assert.deepEqual(workspaceBuildOptions({ compiler: "protoc" }), {
    bufPath: undefined,
    protocPath: "protoc",
  });
  assert.deepEqual(workspaceBuildOptions({ compiler: "protoc", protocPath: "/opt/protoc" }), {
    bufPath: undefined,
    protocPath: "/opt/protoc",
  });
});

test("compiler protoc without a path builds with the protoc on PATH", async () => {
  const real = await findOnPath("protoc", process.env);
  assert.ok(real, "protoc is not on PATH: install protobuf-compiler, as .ci/run does");
  const bin = join(temp, "bin");
  mkdirSync(bin);
  symlinkSync(real, join(bin, "protoc"));
  const ws = join(temp, "ws");
  mkdirSync(ws);
  writeFileSync(join(ws, "a.proto"), 'syntax = "proto3";\npackage a.v1;\nmessage A { string name = 1; }\n');
  const ran: string[] = [];
  const runner: CompilerRunner = (file, args, options) => {
    ran.push(file);
    return runCompiler(file, args, options);
  };
  const { bytes } = await buildWorkspace(ws, {
    ...workspaceBuildOptions({ compiler: "protoc" }),
    env: { PATH: bin },
    cacheDir: false,
    runner,
  });
  assert.ok(bytes.length > 0);
  assert.deepEqual(ran, [join(bin, "protoc")]);

  await assert.rejects(
    buildWorkspace(ws, {
      ...workspaceBuildOptions({ compiler: "protoc" }),
      env: { PATH: temp },
      cacheDir: false,
    }),
    /^ProtocallError: protoc was not found on PATH: install it, set the path of protoc \(protocall\.protocPath\), or build with buf \(protocall\.compiler\)$/,
  );
});
