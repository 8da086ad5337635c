// One side of a drift comparison as whole file descriptors: a running server (its reflection: the
// files of the services it lists, and what they import), or any `--schema` value (a workspace
// directory or .proto file built with the compiler, a descriptor set or image, a registry module),
// opened through the same `openSchema` as calls use, so drift reads a schema exactly as a call does.
import { stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { FileDescriptorProto } from "@bufbuild/protobuf/wkt";
import { reflectionTarget } from "../analysis/reflection-source";
import { ProtocallError } from "../errors";
import type { CurlOptions } from "../invoke/options";
import type { DescriptorSetSource } from "../schema/descriptor-set-source";
import { type OpenSchemaOptions, openSchema } from "../schema/open-schema";
import type { FileSource } from "../schema/types";

export type DriftSideKind = "server" | "module" | "workspace" | "descriptor-set";

export interface DriftSide {
  /** What was named: the URL, the module reference, the path. */
  readonly spec: string;
  readonly kind: DriftSideKind;
  /** Every file of the schema (a server's: the files its listed services need). */
  readonly files: FileDescriptorProto[];
  /** A server's listed services (reflection's own left out); undefined for a schema. */
  readonly served?: string[];
  /** For a workspace: the directories its file names may be relative to (its module roots), to name places on disk. */
  readonly roots?: string[];
}

export interface OpenSideOptions extends OpenSchemaOptions {
  /** Connection options for a server (protocol, TLS, headers), as `protocall curl` takes them. */
  connection: CurlOptions;
  /** Longest wait for the server to connect and answer one reflection request, in milliseconds. */
  timeoutMs: number;
}

/** The reflection services a server adds for tools; they are not part of the application's schema. */
export const REFLECTION_SERVICES: ReadonlySet<string> = new Set([
  "grpc.reflection.v1.ServerReflection",
  "grpc.reflection.v1alpha.ServerReflection",
]);

/** Whether a side spec is a server URL. */
export function isServerUrl(spec: string): boolean {
  return /^https?:\/\//i.test(spec);
}

/** Opens one side. Throws ProtocallError (or the reflection's ConnectError) when it cannot be read. */
export async function openSide(spec: string, options: OpenSideOptions): Promise<DriftSide> {
  if (isServerUrl(spec)) return openServer(spec, options);
  const path = resolve(options.cwd, spec);
  const st = await stat(path).catch(() => undefined);
  const source = await openSchema(spec, options);
  try {
    const index = (source as Partial<DescriptorSetSource>).index;
    if (!index)
      throw new ProtocallError(`${spec}: this kind of schema cannot be compared; give a file or directory`);
    const files = index.listFiles().map((name) => index.decode(name, true));
    if (spec === "-") return { spec, kind: "descriptor-set", files };
    if (!st) return { spec, kind: "module", files };
    if (st.isDirectory()) return { spec, kind: "workspace", files, roots: await moduleRoots(path) };
    if (spec.endsWith(".proto")) {
      const { findBuildRoot } = await import("../schema/workspace");
      return { spec, kind: "workspace", files, roots: await moduleRoots((await findBuildRoot(path)).root) };
    }
    return { spec, kind: "descriptor-set", files };
  } finally {
    await source.close();
  }
}

/** The directory and the module directories its buf.yaml (v2) or buf.work.yaml lists. */
async function moduleRoots(dir: string): Promise<string[]> {
  const { readBufWorkYaml, readBufYaml } = await import("../schema/buf-config");
  // Only to name places: a configuration that cannot be read was reported by the build, or is not used.
  const yaml = await readBufYaml(dir).catch(() => undefined);
  const work = await readBufWorkYaml(dir).catch(() => undefined);
  const dirs = [...(yaml?.modules.map((m) => m.path) ?? []), ...(work?.directories ?? [])];
  return [dir, ...dirs.map((d) => join(dir, d))];
}

async function openServer(url: string, options: OpenSideOptions): Promise<DriftSide> {
  const target = await reflectionTarget({ ...options.connection, url }, url, options.cwd, {
    timeoutMs: options.timeoutMs,
  });
  const source = await target.open();
  try {
    const served = (await source.listServices()).filter((s) => !REFLECTION_SERVICES.has(s));
    return { spec: url, kind: "server", files: await serverFiles(source, served, url), served };
  } finally {
    await source.close();
  }
}

/** The files that declare the services, and every file they import, each once. */
async function serverFiles(
  source: FileSource,
  services: string[],
  url: string,
): Promise<FileDescriptorProto[]> {
  const files = new Map<string, FileDescriptorProto>();
  const add = (file: {
    proto: FileDescriptorProto;
    dependencies: readonly { proto: FileDescriptorProto }[];
  }) => {
    if (files.has(file.proto.name)) return;
    files.set(file.proto.name, file.proto);
    for (const dep of file.dependencies) add(dep as typeof file);
  };
  for (const name of services) {
    const desc = await source.findType(name);
    if (desc?.kind !== "service") {
      throw new ProtocallError(
        `the server at ${url} lists the service ${name} but its reflection does not describe it; the server's reflection is incomplete`,
      );
    }
    add(desc.file);
  }
  return [...files.values()];
}
