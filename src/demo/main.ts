// Runs the demo server from the command line and prints its URL:
//   node --import tsx src/demo/main.ts [--port 8080] [--host 127.0.0.1] [--http both|1.1|h2c]
//     [--cert server.crt --key server.key [--ca ca.crt --require-client-cert]] [--unix-socket PATH]
//     [--reflection v1,v1alpha|none] [--path-prefix /api]
// Stops on SIGINT or SIGTERM.
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { type DemoServerOptions, startDemoServer } from "./server";

const help = `Usage: demo-server [flags]   (prints its URL, then serves until SIGINT or SIGTERM)
  --port N                  TCP port (default: any free port)
  --host ADDRESS            interface to listen on (default 127.0.0.1)
  --http both|1.1|h2c       plain-text HTTP versions (default both, on one port)
  --cert FILE --key FILE    serve HTTPS (ALPN h2 and http/1.1)
  --ca FILE                 trusted authorities for client certificates
  --require-client-cert     mutual TLS: a client certificate signed by --ca is required
  --unix-socket PATH        listen on a Unix socket instead of TCP
  --reflection LIST         v1,v1alpha (default), v1, v1alpha or none
  --path-prefix /api        serve every RPC under this path prefix
`;

export async function runDemoMain(argv: string[]): Promise<void> {
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(help);
    return;
  }
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: "string" },
      host: { type: "string" },
      http: { type: "string" },
      cert: { type: "string" },
      key: { type: "string" },
      ca: { type: "string" },
      "require-client-cert": { type: "boolean" },
      "unix-socket": { type: "string" },
      reflection: { type: "string" },
      "path-prefix": { type: "string" },
    },
  });
  const options: DemoServerOptions = {
    port: values.port ? Number(values.port) : 0,
    host: values.host,
    unixSocket: values["unix-socket"],
    pathPrefix: values["path-prefix"],
  };
  if (values.http) {
    if (!["both", "1.1", "h2c"].includes(values.http)) throw new Error("--http must be both, 1.1 or h2c");
    options.http = values.http as DemoServerOptions["http"];
  }
  if (values.cert || values.key) {
    if (!values.cert || !values.key) throw new Error("--cert and --key go together");
    options.tls = {
      cert: readFileSync(values.cert, "utf8"),
      key: readFileSync(values.key, "utf8"),
      ca: values.ca ? readFileSync(values.ca, "utf8") : undefined,
      requestClientCert: values["require-client-cert"] === true,
    };
  }
  if (values.reflection !== undefined) {
    const list = values.reflection.split(",").map((v) => v.trim());
    if (list.length === 1 && list[0] === "none") options.reflection = false;
    else if (list.every((v) => v === "v1" || v === "v1alpha"))
      options.reflection = list as ("v1" | "v1alpha")[];
    else throw new Error("--reflection must be a list of v1 and v1alpha, or none");
  }
  const server = await startDemoServer(options);
  process.stdout.write(`${server.url}\n`);
  const stop = () => {
    server.close().then(() => process.exit(0));
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

if (require.main === module) {
  runDemoMain(process.argv.slice(2)).catch((err: unknown) => {
    process.stderr.write(`demo server: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
