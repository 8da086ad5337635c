#!/usr/bin/env node
// `npm start` / `npm run demo`: builds Protocall, starts the demo server (demo.v1 over Connect, gRPC and
// gRPC-Web, with server reflection), runs a few `protocall curl` commands against it and prints each
// command with its output, then keeps the server running for you to try more (Ctrl+C stops it).
// Usage: node scripts/demo.mjs [--once] [--port N] [--no-build]
//   --once      exit after the commands (exit code 0 when each command ended as expected)
//   --port N    port of the demo server (default 8080, or any free port when 8080 is taken)
//   --no-build  use the CLI already in dist/ (the tests build it once, before running)
import { spawn } from "node:child_process";
import { dirname, join, relative, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const once = process.argv.includes("--once");
const rebuildCli = !process.argv.includes("--no-build");
const portArg = process.argv.indexOf("--port");
const port = portArg > 0 ? Number(process.argv[portArg + 1]) : 8080;
const cli = join(root, "dist/cli.js");
const demoServer = join(root, "dist/demo-server.js");

async function build() {
  if (rebuildCli) {
    const build = spawn(process.execPath, [join(root, "esbuild.mjs")], { cwd: root, stdio: "inherit" });
    const code = await new Promise((r) => build.on("close", r));
    if (code !== 0) throw new Error("the build failed");
  }
  await esbuild.build({
    entryPoints: { "demo-server": join(root, "src/demo/main.ts") },
    outdir: join(root, "dist"),
    bundle: true,
    platform: "node",
    target: "node20",
    format: "cjs",
    sourcemap: true,
    logLevel: "warning",
  });
}

/** Starts dist/demo-server.js and resolves with the process and the URL it prints. */
function startServer(listenPort) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [demoServer, "--port", String(listenPort)], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (c) => {
      stderr += c;
    });
    const lines = createInterface({ input: child.stdout });
    lines.once("line", (url) => resolvePromise({ child, url: url.trim() }));
    child.once("exit", (code) =>
      reject(new Error(stderr.trim() || `the demo server exited with code ${code}`)),
    );
  });
}

/** Quotes an argument for display the way a POSIX shell would need it. */
function quote(arg) {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`;
}

function runCurl(args) {
  process.stdout.write(`\n$ protocall curl ${args.map(quote).join(" ")}\n`);
  return new Promise((resolvePromise) => {
    const child = spawn(process.execPath, [cli, "curl", ...args], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout.pipe(process.stdout, { end: false });
    child.stderr.pipe(process.stdout, { end: false });
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolvePromise(code ?? 1);
    });
  });
}

async function main() {
  process.stdout.write("Building Protocall...\n");
  await build();
  let server;
  try {
    server = await startServer(port);
  } catch (err) {
    if (portArg > 0 || !/EADDRINUSE/.test(String(err))) throw err;
    server = await startServer(0);
  }
  const { child, url } = server;
  const stop = () => child.kill("SIGTERM");
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  process.stdout.write(`\nThe demo server is listening at ${url}\n`);

  const examples = relative(root, join(root, "examples")) || "examples";
  const steps = [
    { title: "List the services (server reflection)", args: ["--list-services", url], expect: 0 },
    {
      title: "A unary call",
      args: ["-d", '{"name": "world"}', `${url}/demo.v1.GreetService/Greet`],
      expect: 0,
    },
    {
      title: "A server stream over gRPC: three responses, 200 ms apart",
      args: [
        "--protocol",
        "grpc",
        "-d",
        '{"count": 3, "delayMs": 200, "text": "tick"}',
        `${url}/demo.v1.DemoService/Count`,
      ],
      expect: 0,
    },
    {
      title: "A client stream: several JSON documents, one response",
      args: ["-d", '{"number": 1} {"number": 2} {"number": 39}', `${url}/demo.v1.DemoService/Sum`],
      expect: 0,
    },
    {
      title: "An error with details: the exit code is the gRPC code × 8 (not_found = 5 → 40)",
      args: [
        "-d",
        '{"code": "CODE_NOT_FOUND", "message": "no such order", "details": ["DETAIL_ERROR_INFO", "DETAIL_RETRY_INFO"]}',
        `${url}/demo.v1.DemoService/Fail`,
      ],
      expect: 40,
    },
    {
      title: "The schema from .proto files instead of reflection",
      args: ["--schema", examples, "-d", '{"name": "schema"}', `${url}/demo.v1.GreetService/Greet`],
      expect: 0,
    },
  ];
  let ok = true;
  for (const step of steps) {
    process.stdout.write(`\n# ${step.title}`);
    const code = await runCurl(step.args);
    process.stdout.write(`(exit code ${code})\n`);
    if (code !== step.expect) ok = false;
  }

  if (once) {
    stop();
    process.exitCode = ok ? 0 : 1;
    return;
  }
  process.stdout.write(
    [
      "",
      `The demo server keeps running at ${url} (Ctrl+C to stop). Try these`,
      "(node bin/protocall.js is the `protocall` command; `npm link` puts it on your PATH):",
      `  node bin/protocall.js curl --list-methods ${url}`,
      `  node bin/protocall.js curl -d '{"text": "hi"}' ${url}/demo.v1.DemoService/Sample`,
      `  node bin/protocall.js curl --protocol grpcweb -d '{"count": 5, "delayMs": 500}' ${url}/demo.v1.DemoService/Count`,
      `  node bin/protocall.js curl -d @- ${url}/demo.v1.DemoService/Chat     (type JSON lines, Ctrl+D to end)`,
      `  node bin/protocall.js curl -v -H 'x-demo: 1' -d '{}' ${url}/demo.v1.DemoService/Inspect`,
      `  node bin/protocall.js curl --emit-defaults -d '{}' ${url}/demo.v1.DemoService/Echo`,
      "",
    ].join("\n"),
  );
  await new Promise((r) => child.once("exit", r));
}

main().catch((err) => {
  process.stderr.write(`demo: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
