// Classification by buf's own breaking rules: both sides are written as images to a temporary
// directory and the bundled `buf breaking <input> --against <against>` (the same buf the compiler
// uses, find-buf.ts) judges them, so "breaking" means exactly what buf means. Images from reflection
// carry no source info, and buf places each finding at a line of the input; so every element of the
// images gets a line of its own (synthetic source info), and a finding's line names its element.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create, toBinary } from "@bufbuild/protobuf";
import {
  type FileDescriptorProto,
  FileDescriptorSetSchema,
  type SourceCodeInfo_Location,
  SourceCodeInfo_LocationSchema,
  SourceCodeInfoSchema,
} from "@bufbuild/protobuf/wkt";
import { ProtocallError } from "../errors";
import { findBuf, runCompiler } from "../schema/compiler";
import { fileElements } from "./schema-elements";

/** One finding of `buf breaking`, with the element of the input it is placed at (when it has a place). */
export interface BufFinding {
  /** buf's rule id, e.g. FIELD_NO_DELETE. */
  readonly rule: string;
  readonly message: string;
  /** The file buf names. */
  readonly file: string;
  /** The id of the element of the input (schema-elements.ts) buf placed it at. */
  readonly elementId?: string;
}

/** buf's categories of breaking rules, strictest first (buf's default is FILE). */
export const BREAKING_RULES = ["FILE", "PACKAGE", "WIRE_JSON", "WIRE"] as const;
export type BreakingRules = (typeof BREAKING_RULES)[number];

export interface BufBreakingOptions {
  /** The category of rules (default FILE). */
  rules?: BreakingRules;
  bufPath?: string;
  env?: NodeJS.ProcessEnv;
  signal?: AbortSignal;
}

/** The rules, stated so that no buf.yaml around the temporary files applies. */
const config = (rules: BreakingRules) => JSON.stringify({ version: "v2", breaking: { use: [rules] } });

/** The parts of an element that get a line too: the fields of its descriptor message up to this number. */
const PARTS = 10;

/** Files with one synthetic source line per element; returns the images' files and line → element id. */
function withElementLines(files: readonly FileDescriptorProto[]) {
  const lines = new Map<string, Map<number, string>>();
  const out = files.map((file) => {
    const byLine = new Map<number, string>();
    const location: SourceCodeInfo_Location[] = [];
    const add = (path: number[], id: string) => {
      location.push(create(SourceCodeInfo_LocationSchema, { path, span: [location.length, 0, 1] }));
      byLine.set(location.length, id);
    };
    for (const e of fileElements(file)) {
      add([...e.path], e.id);
      // buf places some findings at a part of the element (a field's type, a method's input type).
      if (e.kind !== "file") for (let part = 1; part <= PARTS; part++) add([...e.path, part], e.id);
    }
    lines.set(file.name, byLine);
    return { ...file, sourceCodeInfo: create(SourceCodeInfoSchema, { location }) } as FileDescriptorProto;
  });
  return { files: out, lines };
}

function image(files: readonly FileDescriptorProto[]): Uint8Array {
  return toBinary(FileDescriptorSetSchema, create(FileDescriptorSetSchema, { file: [...files] }));
}

/** Runs `buf breaking` on the two schemas and returns its findings. */
export async function bufBreaking(
  input: readonly FileDescriptorProto[],
  against: readonly FileDescriptorProto[],
  options: BufBreakingOptions = {},
): Promise<BufFinding[]> {
  const buf = await findBuf({ bufPath: options.bufPath, env: options.env });
  const dir = await mkdtemp(join(tmpdir(), "protocall-drift-"));
  try {
    const a = withElementLines(input);
    await writeFile(join(dir, "input.binpb"), image(a.files));
    await writeFile(join(dir, "against.binpb"), image(withElementLines(against).files));
    const run = await runCompiler(
      buf,
      [
        "breaking",
        "input.binpb",
        "--against",
        "against.binpb",
        "--error-format=json",
        "--config",
        config(options.rules ?? "FILE"),
      ],
      {
        cwd: dir,
        env: { ...(options.env ?? process.env), BUF_CACHE_DIR: join(dir, "cache") },
        signal: options.signal,
      },
    );
    const text = `${Buffer.from(run.stdout).toString("utf8")}\n${run.stderr}`;
    const findings: BufFinding[] = [];
    const other: string[] = [];
    for (const line of text.split("\n")) {
      if (line.trim() === "") continue;
      let parsed: { path?: string; start_line?: number; type?: string; message?: string };
      try {
        parsed = JSON.parse(line);
      } catch {
        other.push(line.trim());
        continue;
      }
      if (typeof parsed.type !== "string" || typeof parsed.message !== "string") {
        other.push(line.trim());
        continue;
      }
      const file = parsed.path ?? "";
      findings.push({
        rule: parsed.type,
        message: parsed.message,
        file,
        elementId: parsed.start_line ? a.lines.get(file)?.get(parsed.start_line) : undefined,
      });
    }
    // buf exits 100 when it found breaking changes, 0 when none; anything else is a failure.
    if (run.code !== 0 && run.code !== 100) {
      throw new ProtocallError(
        `buf breaking failed (exit ${run.code ?? "by a signal"}): ${other.join("; ") || "no error message"}`,
      );
    }
    return findings;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
