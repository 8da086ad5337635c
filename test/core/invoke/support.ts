// Helpers for the invoke tests: run `runCurl` in-process with captured output, and a descriptor set of
// the demo API written to a temporary file (for --schema without running the compiler).
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough, Readable, Writable } from "node:stream";
import { create, type DescFile, toBinary } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { runCurl } from "../../../src/cli/run-curl";
import { type CurlOptions, defaultCurlOptions } from "../../../src/core/invoke/options";
import { demoFiles } from "../../../src/demo/server";

export class Capture extends Writable {
  private chunks: Buffer[] = [];
  override _write(chunk: Buffer | string, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    this.chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
    cb();
  }
  text(): string {
    return Buffer.concat(this.chunks).toString("utf8");
  }
}

export interface CurlRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs protocall curl in-process. `stdin` is text fed to standard input. */
export async function curl(
  options: Partial<CurlOptions>,
  io: { stdin?: string | Readable; cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<CurlRun> {
  const o = { ...defaultCurlOptions(), ...options };
  const stdout = new Capture();
  const stderr = new Capture();
  const stdin =
    io.stdin === undefined
      ? Readable.from([])
      : typeof io.stdin === "string"
        ? Readable.from([Buffer.from(io.stdin)])
        : io.stdin;
  const code = await runCurl(o, {
    cwd: io.cwd ?? process.cwd(),
    env: io.env ?? {},
    stdin,
    stdinIsTTY: false,
    homedir: tmpdir(),
    stdout,
    stderr,
    product: "protocall/test",
  });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

/** Writes a binary FileDescriptorSet of the demo API (with its imports) and returns its path. */
export function writeDemoDescriptorSet(): string {
  const files: DescFile[] = [];
  const seen = new Set<DescFile>();
  const visit = (f: DescFile) => {
    if (seen.has(f)) return;
    seen.add(f);
    for (const d of f.dependencies) visit(d);
    files.push(f);
  };
  for (const f of demoFiles) visit(f);
  const set = create(FileDescriptorSetSchema, { file: files.map((f) => f.proto) });
  const dir = mkdtempSync(join(tmpdir(), "protocall-curl-"));
  const path = join(dir, "demo.binpb");
  writeFileSync(path, toBinary(FileDescriptorSetSchema, set));
  return path;
}

/** A stdin whose lines are written by the test, to check that bidi streams are interactive. */
export function interactiveStdin(): PassThrough {
  return new PassThrough();
}
