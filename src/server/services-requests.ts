// The Services view's requests: the sources (the workspace's builds, descriptor-set files and
// configured schemas from the schema store, then the servers the client passes), and each level of a
// source's tree on demand (packages, a package's services, a service's methods), plus the `.rpc` text
// of a new request for a method. Everything comes from the same schema store as diagnostics and
// hover: one build, one cache.
import { basename, relative, resolve, sep } from "node:path";
import { pathToFileURL } from "node:url";
import { ConnectError } from "@connectrpc/connect";
import type { Connection } from "vscode-languageserver";
import type { Opened, SchemaStore } from "../core/analysis/schema-store";
import { errorMessage } from "../core/errors";
import { methodRequestText } from "../core/rpcfile/serialize";
import { ProtoLocator } from "../core/schema/proto-locator";
import {
  type DeclarationSpan,
  describeService,
  listPackages,
  type PackageEntry,
  packageOf,
  type ServiceEntry,
} from "../core/schema/service-tree";
import type { FileSource } from "../core/schema/types";
import { onCheckedRequest } from "./checked-request";
import {
  type ServiceChildrenParams,
  type ServiceChildrenResult,
  type ServiceNode,
  type ServiceRange,
  type ServiceRequestTextParams,
  type ServiceRequestTextResult,
  type ServiceServer,
  type ServiceSourceInfo,
  type ServiceSourcesParams,
  type ServiceSourcesResult,
  serviceChildrenRequest,
  serviceRequestTextRequest,
  serviceSourcesRequest,
} from "./protocol";
import { openServerSource, serverBaseUrl } from "./services-server-source";

export interface ServicesContext {
  store: SchemaStore;
  /** The workspace folders (absolute paths). */
  folders(): readonly string[];
}

/** Registers the Services view's requests on a connection. */
export function registerServicesRequests(connection: Connection, ctx: ServicesContext): void {
  const view = new ServicesView(ctx);
  onCheckedRequest(connection, serviceSourcesRequest, (p) => view.sources(p));
  onCheckedRequest(connection, serviceChildrenRequest, (p) => view.children(p));
  onCheckedRequest(connection, serviceRequestTextRequest, (p) => view.requestText(p));
}

export class ServicesView {
  private locator = new ProtoLocator();
  private locatorGeneration: unknown;

  constructor(private readonly ctx: ServicesContext) {}

  async sources(params: ServiceSourcesParams): Promise<ServiceSourcesResult> {
    const sources: ServiceSourceInfo[] = [];
    const folders = this.ctx.folders();
    for (const o of await this.ctx.store.workspaceSources()) {
      if (!o.kind || !o.origin) continue;
      const info: ServiceSourceInfo = {
        id: sourceId(o.kind, o.origin),
        kind: o.kind,
        label: sourceLabel(o.kind, o.origin, folders),
        origin: o.origin,
      };
      if (!o.source) info.error = problemText(o);
      sources.push(info);
    }
    for (const server of params.servers) {
      const url = server.url;
      const info: ServiceSourceInfo = {
        id: `server:${url}`,
        kind: "server",
        label: server.name?.trim() || url,
        origin: url,
      };
      try {
        serverBaseUrl(server);
      } catch (err) {
        info.error = errorMessage(err);
      }
      sources.push(info);
    }
    return { sources };
  }

  async children(params: ServiceChildrenParams): Promise<ServiceChildrenResult> {
    const opened = await this.open(params.source, params.server);
    if (!opened.source) return { children: [], error: problemText(opened) };
    const source = opened.source;
    const key = `services-view\u0000${params.source}\u0000${JSON.stringify(params.server ?? null)}`;
    try {
      const parent = params.parent;
      if (!parent) {
        const packages = await this.packages(key, source);
        return {
          children: packages.map((p) => ({ kind: "package", name: p.name, serviceCount: p.services.length })),
        };
      }
      if (parent.kind === "package") {
        const pkg = (await this.packages(key, source)).find((p) => p.name === parent.name);
        const children: ServiceNode[] = [];
        // The services' files are decoded together: their comments are the items' tooltips.
        const entries = await Promise.all(
          (pkg?.services ?? []).map((s) => this.service(key, source, s).catch(() => undefined)),
        );
        for (const [i, name] of (pkg?.services ?? []).entries()) {
          const e = entries[i];
          const pkgName = packageOf(name);
          const label = pkgName ? name.slice(pkgName.length + 1) : name;
          const node: ServiceNode = { kind: "service", name, label };
          if (e) {
            if (e.comment) node.comment = e.comment;
            if (e.deprecated) node.deprecated = true;
            const location = await this.location(e.declaration, opened);
            if (location) node.location = location;
          }
          children.push(node);
        }
        return { children };
      }
      const service = await this.service(key, source, parent.name);
      if (!service) {
        return {
          children: [],
          error: `${source.label} no longer defines ${parent.name}; refresh the Services view`,
        };
      }
      const children: ServiceNode[] = [];
      for (const m of service.methods) {
        const node: ServiceNode = {
          kind: "method",
          name: m.fullName,
          label: m.name,
          service: service.fullName,
          streaming: m.kind,
          input: m.input,
          output: m.output,
        };
        if (m.comment) node.comment = m.comment;
        if (m.deprecated) node.deprecated = true;
        if (m.idempotency) node.idempotency = m.idempotency;
        const location = await this.location(m.declaration, opened);
        if (location) node.location = location;
        children.push(node);
      }
      return { children };
    } catch (err) {
      return { children: [], error: failureText(err, source, params.server) };
    }
  }

  async requestText(params: ServiceRequestTextParams): Promise<ServiceRequestTextResult> {
    const opened = await this.open(params.source, params.server);
    if (!opened.source) return { error: problemText(opened) };
    const serviceName = packageOf(params.method);
    const methodName = params.method.slice(serviceName.length + 1);
    try {
      const file = await opened.source.findFile(serviceName);
      const method = file?.services
        .find((s) => s.typeName === serviceName)
        ?.methods.find((m) => m.name === methodName);
      if (!method) {
        return {
          error: `${opened.source.label} does not define ${params.method}; refresh the Services view`,
        };
      }
      const server = params.server;
      const protocol = server?.protocol && server.protocol !== "connect" ? server.protocol : undefined;
      const lines = methodRequestText(method, { protocol, hostVariable: "host" }).split("\n");
      const path = `/${serviceName}/${methodName}`;
      const urlLine = lines.indexOf(`{{host}}${path}`);
      lines[urlLine] = `${params.baseUrl.replace(/[\r\n]/g, "").replace(/\/+$/, "")}${path}`;
      if (server) {
        const options: string[] = [];
        if (server.http2PriorKnowledge) options.push("# @http2-prior-knowledge");
        if (server.insecure) options.push("# @insecure");
        // The entry's relative paths are relative to the workspace folder; the request's would be
        // relative to its .rpc file, so they are written absolute.
        const baseDir = this.ctx.folders()[0] ?? process.cwd();
        for (const k of ["cacert", "cert", "key", "servername"] as const) {
          const v = server[k];
          if (typeof v !== "string" || v === "") continue;
          const value = k === "servername" ? v : resolve(baseDir, v);
          options.push(`# @${k} ${value.replace(/[\r\n]/g, "")}`);
        }
        const headers = (server.headers ?? [])
          .filter((h): h is string => typeof h === "string" && h.includes(":"))
          .map((h) => h.replace(/[\r\n]/g, ""));
        lines.splice(urlLine + 1, 0, ...headers);
        lines.splice(urlLine, 0, ...options);
      }
      return { text: lines.join("\n") };
    } catch (err) {
      return { error: failureText(err, opened.source, params.server) };
    }
  }

  private open(id: string, server: ServiceServer | undefined): Promise<Opened> {
    if (id.startsWith("server:")) {
      if (!server) return Promise.resolve({ problem: `no server entry was given for ${id.slice(7)}` });
      return openServerSource(this.ctx.store, server, this.ctx.folders()[0] ?? process.cwd());
    }
    return this.ctx.store.workspaceSources().then((all) => {
      const found = all.find((o) => o.kind && o.origin && sourceId(o.kind, o.origin) === id);
      return (
        found ?? {
          problem: `the source ${id.slice(id.indexOf(":") + 1)} is gone; refresh the Services view`,
        }
      );
    });
  }

  private packages(key: string, source: FileSource): Promise<PackageEntry[]> {
    return this.ctx.store.remember(`${key}\u0000packages`, () => listPackages(source));
  }

  private service(key: string, source: FileSource, name: string): Promise<ServiceEntry | undefined> {
    return this.ctx.store.remember(`${key}\u0000service\u0000${name}`, () => describeService(source, name));
  }

  /** The declaration as a document location, when its .proto file is in the workspace. */
  private async location(
    declaration: DeclarationSpan | undefined,
    opened: Opened,
  ): Promise<{ uri: string; range: ServiceRange } | undefined> {
    if (!declaration) return undefined;
    // The .proto files on disk change with the schema store's generation (watched files).
    const generation = await this.ctx.store.remember("services-view\u0000locator", async () => ({}));
    if (generation !== this.locatorGeneration) {
      this.locatorGeneration = generation;
      this.locator = new ProtoLocator();
    }
    const roots = opened.kind === "workspace-build" && opened.origin ? [opened.origin] : [];
    const path = await this.locator.locate(declaration.file, [...roots, ...this.ctx.folders()]);
    if (!path) return undefined;
    const s = declaration.span;
    return {
      uri: pathToFileURL(path).href,
      range: {
        start: { line: s.startLine, character: s.startColumn },
        end: { line: s.endLine, character: s.endColumn },
      },
    };
  }
}

function sourceId(kind: string, origin: string): string {
  switch (kind) {
    case "workspace-build":
      return `build:${origin}`;
    case "descriptor-set":
      return `set:${origin}`;
    default:
      return `setting:${origin}`;
  }
}

/** A path relative to the workspace folder that holds it (the folder's name for the folder itself). */
function sourceLabel(kind: string, origin: string, folders: readonly string[]): string {
  for (const folder of folders) {
    const rel = relative(folder, origin);
    if (rel === "") return basename(folder);
    if (!rel.startsWith("..") && !rel.startsWith(sep)) return rel.split(sep).join("/");
  }
  // Outside the workspace (a configured schema elsewhere): its name; the path is in the tooltip.
  return kind === "setting" ? basename(origin) : origin;
}

function problemText(o: Opened): string {
  const text = o.problem ?? "the source could not be opened";
  if (o.compilerError) return `${text}\nFix the errors listed in the Problems panel, then save.`;
  return text;
}

function failureText(err: unknown, source: FileSource, server: ServiceServer | undefined): string {
  const message = err instanceof ConnectError ? err.rawMessage : errorMessage(err);
  const text = message.startsWith(source.label) ? message : `${source.label}: ${message}`;
  if (!server) return text;
  return `${text}\nCheck that the server is running and supports gRPC server reflection, and its URL, headers and TLS options (protocall.servers); then refresh.`;
}
