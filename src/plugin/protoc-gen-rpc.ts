// protoc-gen-rpc: a Protobuf plugin (for `buf generate` or protoc) that writes one `.rpc` request file
// per service, `<proto directory>/<Service>.rpc`, with a request per method: `### <Method>`, the
// method's comments, `{{host}}/<package.Service>/<Method>` and a JSON skeleton of the input message.
//
// Options (`opt:` in buf.gen.yaml, or --rpc_opt):
//   host=<url>          the value of the `@host` variable (default http://localhost:8080)
//   protocol=<p>        adds `# @protocol <p>` to every request: connect, grpc or grpcweb
//
// Files are written only through the plugin framework's generator context, never to the file system.
import { createEcmaScriptPlugin, runNodeJs, type Schema } from "@bufbuild/protoplugin";
import { version } from "../cli/version";
import type { Protocol } from "../core/invoke/options";
import { serviceRequestFile } from "../core/rpcfile/serialize";

export interface RpcPluginOptions {
  host?: string;
  protocol?: Protocol;
}

const protocols: readonly string[] = ["connect", "grpc", "grpcweb"];

function parseOptions(raw: { key: string; value: string }[]): RpcPluginOptions {
  const out: RpcPluginOptions = {};
  for (const { key, value } of raw) {
    switch (key) {
      case "host":
        if (!/^https?:\/\/\S+$/.test(value)) {
          throw new Error(
            `option host=${value}: give an http:// or https:// URL, such as host=http://localhost:8080`,
          );
        }
        out.host = value;
        break;
      case "protocol":
        if (!protocols.includes(value)) {
          throw new Error(`option protocol=${value}: use connect, grpc or grpcweb`);
        }
        out.protocol = value as Protocol;
        break;
      default:
        throw new Error(
          `unknown option ${key}: protoc-gen-rpc takes host=<url> and protocol=connect|grpc|grpcweb`,
        );
    }
  }
  return out;
}

function generate(schema: Schema<RpcPluginOptions>): void {
  for (const file of schema.files) {
    const slash = file.name.lastIndexOf("/");
    const dir = slash >= 0 ? file.name.slice(0, slash + 1) : "";
    for (const service of file.services) {
      const out = schema.generateFile(`${dir}${service.name}.rpc`);
      out.print(
        serviceRequestFile(service, {
          host: schema.options.host,
          protocol: schema.options.protocol,
          sourceName: `${file.name}.proto`,
          generator: "protoc-gen-rpc",
        }).replace(/\n$/, ""),
      );
    }
  }
}

/** The plugin. Its output is the same whatever `target` asks for (it writes .rpc files, not code). */
export const protocGenRpc = createEcmaScriptPlugin<RpcPluginOptions>({
  name: "protoc-gen-rpc",
  version: `v${version}`,
  parseOptions,
  // Generate once, for the first target requested; the other targets get nothing more (and nothing
  // is transpiled, since every target has a generator).
  generateTs: (schema, target) => {
    if (schema.targets[0] === target) generate(schema);
  },
  generateJs: (schema, target) => {
    if (schema.targets[0] === target) generate(schema);
  },
  generateDts: (schema, target) => {
    if (schema.targets[0] === target) generate(schema);
  },
});

if (require.main === module) runNodeJs(protocGenRpc);
