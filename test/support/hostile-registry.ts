// A registry that serves the module API (buf.registry.module.v1: GetCommits, GetGraph, Download,
// GetModules, and owner GetOwners) for one module with one dependency, over https with a test CA, and
// can be told to misbehave the ways a broken or hostile registry would: a wrong digest, a file path
// that leaves the module, an oversize download, a graph without the commit asked for, a body that is
// not a Connect message, or no answer at all; or be a server without the module API (404 for every
// path, or an HTML page). A real connect-node server on loopback, so the client
// under test goes through its whole network stack.
//
//   const hostile = await startHostileRegistry(pki);
//   hostile.mode = "wrong-digest";
//   await openSchema(`${hostile.remote}/acme/app`, ...)   // fails, nothing cached
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type ConnectRouter } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { b5Digest, type ModuleFile } from "../../src/core/registry/b5-digest";
import { type Commit, CommitSchema } from "../../src/gen/buf/registry/module/v1/commit_pb";
import { CommitService } from "../../src/gen/buf/registry/module/v1/commit_service_pb";
import { DigestType } from "../../src/gen/buf/registry/module/v1/digest_pb";
import { DownloadService } from "../../src/gen/buf/registry/module/v1/download_service_pb";
import { GraphService } from "../../src/gen/buf/registry/module/v1/graph_service_pb";
import { ModuleService } from "../../src/gen/buf/registry/module/v1/module_service_pb";
import { OwnerService } from "../../src/gen/buf/registry/owner/v1/owner_service_pb";
import type { TestPki } from "./tls";

export type HostileMode =
  | "ok"
  | "wrong-digest"
  | "wrong-dependency-digest"
  | "escaping-path"
  | "oversize"
  | "graph-without-commit"
  | "garbage"
  | "silent"
  | "no-api"
  | "html";

export interface HostileRegistry {
  /** `localhost:PORT` */
  readonly remote: string;
  /** What the next responses do. */
  mode: HostileMode;
  /** The RPCs served so far, in order. */
  readonly calls: string[];
  /** The commit ids of acme/app (the module asked for) and acme/base (its dependency). */
  readonly appCommit: string;
  readonly baseCommit: string;
  close(): Promise<void>;
}

const enc = new TextEncoder();
const file = (path: string, text: string): ModuleFile => ({ path, content: enc.encode(text) });

const baseFiles = [
  file(
    "base/v1/base.proto",
    'syntax = "proto3";\n\npackage base.v1;\n\nmessage Item {\n  string id = 1;\n}\n',
  ),
];
const appFiles = [
  file(
    "app/v1/app.proto",
    'syntax = "proto3";\n\npackage app.v1;\n\nimport "base/v1/base.proto";\n\n// Looks items up.\nservice ItemService {\n  rpc GetItem(base.v1.Item) returns (base.v1.Item);\n}\n',
  ),
  file("LICENSE", "MIT\n"),
];

export async function startHostileRegistry(pki: TestPki): Promise<HostileRegistry> {
  const ids = { owner: "0a".repeat(16), app: "1b".repeat(16), base: "2c".repeat(16) };
  const appCommit = "aa".repeat(16);
  const baseCommit = "bb".repeat(16);
  const baseDigest = b5Digest(baseFiles);
  const appDigest = b5Digest(appFiles, [baseDigest]);
  const calls: string[] = [];
  const state: { mode: HostileMode } = { mode: "ok" };
  const pending = new Set<() => void>();

  const commit = (id: string, moduleId: string, digest: Uint8Array): Commit =>
    create(CommitSchema, {
      id,
      createTime: timestampNow(),
      ownerId: ids.owner,
      moduleId,
      digest: { type: DigestType.B5, value: digest },
    });
  const wrong = (d: Uint8Array) => d.map((b, i) => (i === 0 ? b ^ 0xff : b));
  const appC = () => commit(appCommit, ids.app, state.mode === "wrong-digest" ? wrong(appDigest) : appDigest);
  const baseC = () =>
    commit(baseCommit, ids.base, state.mode === "wrong-dependency-digest" ? wrong(baseDigest) : baseDigest);
  /** Holds the call open until the server closes when the mode is "silent". */
  const maybeHang = async (rpc: string) => {
    calls.push(rpc);
    if (state.mode === "silent") await new Promise<void>((r) => pending.add(r));
  };

  const routes = (router: ConnectRouter) => {
    router.service(CommitService, {
      async getCommits(req) {
        await maybeHang("GetCommits");
        const name = req.resourceRefs[0]?.value;
        if (name?.case !== "name" || name.value.owner !== "acme") {
          throw new ConnectError("module not found", Code.NotFound);
        }
        if (name.value.module === "app") return { commits: [appC()] };
        if (name.value.module === "base") return { commits: [baseC()] };
        throw new ConnectError(`module "acme/${name.value.module}" was not found`, Code.NotFound);
      },
    });
    router.service(GraphService, {
      async getGraph(req) {
        await maybeHang("GetGraph");
        const ref = req.resourceRefs[0]?.value;
        const wantsApp = ref?.case === "name" && ref.value.module === "app";
        if (state.mode === "graph-without-commit") return { graph: { commits: [baseC()], edges: [] } };
        if (!wantsApp) return { graph: { commits: [baseC()] } };
        return {
          graph: {
            commits: [appC(), baseC()],
            edges: [{ fromNode: { commitId: appCommit }, toNode: { commitId: baseCommit } }],
          },
        };
      },
    });
    router.service(DownloadService, {
      async download(req) {
        await maybeHang("Download");
        return {
          contents: req.values.map((v) => {
            const id = v.resourceRef?.value.case === "id" ? v.resourceRef.value.value : "";
            const isApp = id === appCommit;
            let files = isApp ? appFiles : baseFiles;
            if (state.mode === "escaping-path" && isApp) {
              files = [...files, file("../../escaped.proto", 'syntax = "proto3";\n')];
            }
            if (state.mode === "oversize" && isApp) {
              files = [...files, { path: "big/v1/big.proto", content: new Uint8Array(4 * 1024 * 1024) }];
            }
            return {
              commit: isApp ? appC() : baseC(),
              files: files.map((f) => ({ path: f.path, content: f.content })),
            };
          }),
        };
      },
    });
    router.service(ModuleService, {
      async getModules(req) {
        await maybeHang("GetModules");
        return {
          modules: req.moduleRefs.map((r) => {
            const id = r.value.case === "id" ? r.value.value : "";
            return { id, ownerId: ids.owner, name: id === ids.app ? "app" : "base" };
          }),
        };
      },
    });
    router.service(OwnerService, {
      async getOwners(req) {
        await maybeHang("GetOwners");
        return {
          owners: req.ownerRefs.map(() => ({
            value: { case: "organization" as const, value: { id: ids.owner, name: "acme" } },
          })),
        };
      },
    });
  };

  const connect = connectNodeAdapter({ routes });
  const server: Server = createServer({ cert: pki.server.cert, key: pki.server.key }, (req, res) => {
    if (state.mode === "garbage") {
      calls.push(req.url ?? "");
      req.resume();
      res.writeHead(200, { "content-type": "application/proto" });
      res.end(Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f, 0x01, 0x02]));
      return;
    }
    if (state.mode === "no-api" || state.mode === "html") {
      calls.push(req.url ?? "");
      req.resume();
      const html = state.mode === "html";
      res.writeHead(html ? 200 : 404, { "content-type": html ? "text/html" : "text/plain" });
      res.end(html ? "<html><body>Welcome</body></html>" : "404 page not found\n");
      return;
    }
    connect(req, res);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    remote: `localhost:${port}`,
    get mode() {
      return state.mode;
    },
    set mode(m: HostileMode) {
      state.mode = m;
    },
    calls,
    appCommit,
    baseCommit,
    async close() {
      for (const release of pending) release();
      pending.clear();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
