// `protocall load FILE.rpc [--name N]` or `protocall load <url> [protocall curl flags]`: a load test
// of one request. This file reads the flags and renders; the work is core/load (the generator, the
// report, the thresholds) with each request called and checked by the checked-request runner
// (core/load/checked-send.ts). Live progress goes to stderr on a terminal only; Ctrl-C stops sending,
// waits briefly for the requests in flight and writes the report of what ran.

import { readFileSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { relative, resolve } from "node:path";
import { ProtocallError } from "../../core/errors";
import type { LoadResult } from "../../core/load/generator";
import type { LoadShape } from "../../core/load/shape";
import type { Threshold } from "../../core/load/thresholds";
import { cliTokens } from "../auth-interaction";
import type { CliContext, Command } from "../context";
import { homeDirectory } from "../io";
import { version } from "../version";

/** The flags of `protocall load` itself; every other flag is `protocall curl`'s (URL form). */
const loadFlags: Record<string, { value?: string; help: string }> = {
  rate: { value: "R", help: "open model: send R requests per second, whether or not earlier ones answered" },
  concurrency: {
    value: "C",
    help: "closed model: C callers, each sending its next request when the last answered",
  },
  stages: {
    value: "D:T,…",
    help: "ramp the rate (or callers) linearly to each target T over D, e.g. 10s:100,1m:500,10s:0",
  },
  duration: { value: "D", help: "how long to run (default 10s; with --stages, their sum)" },
  requests: { value: "N", help: "stop after N requests" },
  connections: {
    value: "K",
    help: "spread the requests over K connections (HTTP/2 connections or HTTP/1.1 pools); default 1",
  },
  workers: {
    value: "N|auto",
    help: "spread the load over N worker threads (auto: one per core, at most one per connection); default 1",
  },
  warmup: { value: "D", help: "run at the starting level for D first, not counted in the report" },
  threshold: {
    value: "COND",
    help: "fail (exit 1) unless COND holds: 'p99<50ms', 'errors<1%', 'rps>=900'; repeatable",
  },
  reporter: {
    value: "KIND=FILE",
    help: "also write the report: json=FILE (versioned) or html=FILE (charts); repeatable",
  },
  "max-in-flight": {
    value: "N",
    help: "open model: at most N requests waiting for an answer; more are dropped and counted (default 10000)",
  },
  name: { value: "NAME", help: "the request of the .rpc file to run (needed when it holds several)" },
  env: { value: "ENV", help: "environment of the .rpc file" },
  "env-file": { value: "FILE", help: "environment file of the .rpc file" },
  var: { value: "NAME=VALUE", help: "set a variable of the .rpc file; repeatable" },
  data: {
    value: "FILE",
    help: ".rpc file only: FILE.csv or FILE.jsonl; each request takes the next row as variables",
  },
};

const help = `Load-test one request: send it at a rate or from a number of callers, check every response,
and report throughput and latency percentiles.

Usage:
  protocall load FILE.rpc [--name NAME] [flags]
  protocall load <url> [protocall curl flags] [flags]

Shape: --rate R (open model; latency is measured from when each request was due, so a stalled server
shows in the percentiles) or --concurrency C (closed model); --stages ramps either. A request's
# @assert lines are checked on every response, and failures counted by assertion. A request's
# @load line gives these flags in the file (# @load rate=100 duration=10s threshold=p99<50ms);
flags on the command line win. Its {{…}}
variables and generators are evaluated for every request.

The report (stderr; --reporter json=FILE or html=FILE too): requests, passed and failed, requests per
second; latency min/p50/p90/p95/p99/p99.9/max from an HDR histogram; for streams the time to the
first message and messages per second; status codes and error samples; bytes; each stage; and a
warning when the generator could not keep the rate. Exit code: 1 when a --threshold failed, 130
when interrupted, else 0.

Examples:
  protocall load api.rpc --name Greet --rate 200 --duration 30s
  protocall load api.rpc --concurrency 50 --requests 10000 --threshold 'p99<50ms' --threshold 'errors<1%'
  protocall load api.rpc --stages 10s:100,1m:500,10s:0 --reporter html=load.html
  protocall load api.rpc --rate 100 --duration 1m --data users.csv
  protocall load http://localhost:8080/demo.v1.GreetService/Greet -d '{"name":"x"}' --rate 1000 --duration 10s

Flags:
${Object.entries(loadFlags)
  .map(([n, f]) => `  --${`${n} ${f.value ?? ""}`.padEnd(22)} ${f.help}`)
  .join("\n")}
  (and, with a URL, every flag of protocall curl: see protocall curl --help)
`;

export interface LoadArgs {
  values: Map<string, string[]>;
  rest: string[];
  help: boolean;
}

/** Takes the load flags out of the arguments; the rest are a file or a URL and curl flags. */
export function splitArgs(args: string[]): LoadArgs {
  const values = new Map<string, string[]>();
  const rest: string[] = [];
  let help = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--help" || a === "-h") {
      help = true;
      continue;
    }
    const m = /^--([a-z-]+)(?:=(.*))?$/s.exec(a);
    if (!m || !Object.hasOwn(loadFlags, m[1])) {
      rest.push(a);
      continue;
    }
    let v = m[2];
    if (v === undefined) {
      v = args[++i];
      if (v === undefined)
        throw new ProtocallError(
          `--${m[1]} needs a value: ${loadFlags[m[1]].value} (${loadFlags[m[1]].help})`,
        );
    }
    values.set(m[1], [...(values.get(m[1]) ?? []), v]);
  }
  return { values, rest, help };
}

export const command: Command = {
  async run(args: string[], ctx: CliContext): Promise<number> {
    const a = splitArgs(args);
    if (a.help) {
      ctx.stdout.write(help);
      return 0;
    }
    const one = (name: string) => {
      const v = a.values.get(name);
      if (v && v.length > 1) throw new ProtocallError(`--${name} was given ${v.length} times; give it once`);
      return v?.[0];
    };
    const many = (name: string) => a.values.get(name) ?? [];
    (await import("../../core/invoke/light-headers")).installLightHeaders();
    const { source, label, load: fileLoad } = await requestSource(a, one, many, ctx);
    // The request's `# @load` options, where the command line does not give them (nor one of the
    // same choice: --rate or --concurrency, --duration or --stages).
    const choices = [
      ["rate", "concurrency"],
      ["duration", "stages"],
    ];
    const given = (name: string) =>
      (choices.find((c) => c.includes(name)) ?? [name]).some((n) => a.values.has(n));
    for (const [name, values] of [...fileLoad].filter(([n]) => !given(n))) a.values.set(name, values);
    const [shapeMod, thresholdsMod] = await Promise.all([
      import("../../core/load/shape"),
      import("../../core/load/thresholds"),
    ]);
    const shape = shapeMod.shapeFromFlags(one);
    const thresholds: Threshold[] = many("threshold").map(thresholdsMod.parseThreshold);
    const reporters = many("reporter").map((text) => {
      const eq = text.indexOf("=");
      const kind = text.slice(0, eq);
      if (eq <= 0 || (kind !== "json" && kind !== "html") || eq === text.length - 1) {
        throw new ProtocallError(`invalid --reporter ${JSON.stringify(text)}: write json=FILE or html=FILE`);
      }
      return { kind, file: text.slice(eq + 1) };
    });
    const connections = one("connections")
      ? shapeMod.positiveNumber(one("connections") as string, "connections", true)
      : 1;
    const maxInFlight = one("max-in-flight")
      ? shapeMod.positiveNumber(one("max-in-flight") as string, "max-in-flight", true)
      : undefined;

    const [{ runLoadTest, finishReport }, { loadSummaryText }, split] = await Promise.all([
      import("../../core/load/load-test"),
      import("../../core/load/report"),
      import("../../core/load/worker-split"),
    ]);
    const workers = split.workerCount(one("workers"), connections, availableParallelism());
    if (workers > 1 && source.kind === "file" && source.rows && source.rows.length < workers) {
      throw new ProtocallError(
        `--data has ${source.rows.length} rows and --workers ${workers} deals them out round-robin: give at least ${workers} rows, or fewer workers`,
      );
    }
    const stop = new AbortController();
    const interrupted = ctx.interrupted();
    const onInterrupt = () => stop.abort();
    if (interrupted.aborted) stop.abort();
    else interrupted.addEventListener("abort", onInterrupt, { once: true });
    const tty = (ctx.stderr as { isTTY?: boolean }).isTTY === true;
    const plan = runPlan(shape, one, connections, workers);
    ctx.stderr.write(`load ${label}: ${plan.join("; ")} (Ctrl-C stops and reports)\n`);
    const onProgress = tty
      ? (p: import("../../core/load/generator").LoadProgress) => {
          const t = p.recorder;
          const secs = p.elapsedMs / 1000;
          ctx.stderr.write(
            `\r\x1b[K${secs.toFixed(0)}s/${(p.totalMs / 1000).toFixed(0)}s  ${(t.requests / Math.max(secs, 0.001)).toFixed(0)} req/s  p50 ${(t.latency.percentile(50) / 1000).toFixed(1)} ms  p99 ${(t.latency.percentile(99) / 1000).toFixed(1)} ms  errors ${t.requests - t.passed}  in flight ${p.inFlight}`,
          );
        }
      : undefined;
    const product = `protocall/${version}`;
    let run: { report: import("../../core/load/report").LoadReport; result: LoadResult };
    try {
      if (workers > 1) {
        const { runLoadWorkers } = await import("../../core/load/load-workers");
        const startedAt = new Date();
        const { checkSource } = await import("../../core/load/checked-send");
        const problem = checkSource(source);
        if (problem) throw new ProtocallError(problem);
        const merged = await runLoadWorkers({
          // The CLI bundle itself, in worker mode (main.ts).
          script: __filename,
          workers,
          shape,
          env: ctx.env,
          tokens: cliTokens(ctx),
          signal: stop.signal,
          onProgress,
          workerData: (i): LoadWorkerData => ({
            protocallLoadWorker: true,
            args,
            cwd: ctx.cwd,
            index: i,
            workers,
            shape: split.workerShape(shape, workers, i),
            connections: split.workerConnections(connections, workers, i),
            maxInFlight: Math.max(1, split.splitEvenly(maxInFlight ?? 10_000, workers, i)),
            progress: onProgress !== undefined,
          }),
        });
        run = {
          result: merged.result,
          report: finishReport(
            merged.result,
            merged.lightPath,
            { label, product, thresholds },
            startedAt,
            workers,
          ),
        };
      } else {
        run = await runLoadTest({
          source,
          label,
          shape,
          thresholds,
          connections,
          maxInFlight,
          env: ctx.env,
          homedir: homeDirectory(ctx),
          tokens: cliTokens(ctx),
          product,
          signal: stop.signal,
          onProgress,
        });
      }
    } finally {
      interrupted.removeEventListener("abort", onInterrupt);
    }
    if (tty) ctx.stderr.write("\r\x1b[K");
    const { report, result } = run;
    await writeReports(reporters, report, ctx);
    await new Promise<void>((done) => ctx.stderr.write(loadSummaryText(report), () => done()));
    if (result.interrupted) return 130;
    return report.thresholds.every((t) => t.passed) ? 0 : 1;
  },
};

/** What a worker thread of `--workers N` is given (load-worker.ts runs it). */
export interface LoadWorkerData {
  protocallLoadWorker: true;
  /** The arguments of `protocall load`: the worker reads the request as the main thread did. */
  args: string[];
  cwd: string;
  index: number;
  workers: number;
  /** This worker's share of the run. */
  shape: LoadShape;
  connections: number;
  maxInFlight: number;
  /** Whether to post progress (the main thread shows it). */
  progress: boolean;
}

export async function requestSource(
  a: LoadArgs,
  one: (name: string) => string | undefined,
  many: (name: string) => string[],
  ctx: CliContext,
): Promise<{
  source: import("../../core/load/checked-send").RequestSource;
  label: string;
  /** The request's `# @load` options (none for a URL). */
  load: Map<string, string[]>;
}> {
  const first = a.rest.find((x) => !x.startsWith("-"));
  if (first === undefined) {
    throw new ProtocallError(
      "no request given: write `protocall load FILE.rpc` or `protocall load <url> [curl flags]` (see `protocall load --help`)",
    );
  }
  if (!/\.rpc$/i.test(first)) {
    for (const flag of ["name", "env", "env-file", "var"]) {
      if (a.values.has(flag)) throw new ProtocallError(`--${flag} applies to a .rpc file, not to a URL`);
    }
    const { parseCurlArgs } = await import("../../core/invoke/curl-args");
    const { options } = parseCurlArgs(a.rest);
    if (!options.url) throw new ProtocallError("no URL given");
    const zero = { line: 0, character: 0 };
    return {
      source: {
        kind: "fixed",
        request: { options, assertions: [], captures: [], range: { start: zero, end: zero } },
        cwd: ctx.cwd,
      },
      label: options.url,
      load: new Map(),
    };
  }
  if (a.rest.length > 1) {
    throw new ProtocallError(
      `too many arguments after ${first}: ${a.rest.filter((x) => x !== first).join(" ")} (curl flags go with a URL; a .rpc request sets its own options)`,
    );
  }
  const [{ parseRpcFile }, { openRpcContext }, { readDataRows }, { loadOptionValues, parseLoadLine }] =
    await Promise.all([
      import("../../core/rpcfile/parse"),
      import("../../core/rpcfile/context"),
      import("../../core/load/data-rows"),
      import("../../core/load/load-options"),
    ]);
  const full = resolve(ctx.cwd, first);
  const shown = relative(ctx.cwd, full).startsWith("..") ? full : relative(ctx.cwd, full) || first;
  let text: string;
  try {
    text = readFileSync(full, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ProtocallError(
      `cannot read ${first}: ${code === "ENOENT" ? "no such file" : (code ?? String(err))}`,
    );
  }
  const parsed = parseRpcFile(text);
  const errors = parsed.diagnostics.filter((d) => d.severity === "error");
  if (errors.length > 0) {
    throw new ProtocallError(
      errors
        .map((d) => `${shown}:${d.range.start.line + 1}:${d.range.start.character + 1}: ${d.message}`)
        .join("\n"),
    );
  }
  const name = one("name");
  const named = parsed.requests.filter((r) => r.name).map((r) => JSON.stringify(r.name?.text));
  let request = parsed.requests[0];
  if (name !== undefined) {
    const found = parsed.requests.find((r) => r.name?.text === name);
    if (!found)
      throw new ProtocallError(
        `${shown} has no request named ${JSON.stringify(name)}${named.length ? `; its requests: ${named.join(", ")}` : ""}`,
      );
    request = found;
  } else if (parsed.requests.length > 1) {
    throw new ProtocallError(
      `${shown} holds ${parsed.requests.length} requests: choose one with --name (${named.join(", ") || "name them with ### <name>"})`,
    );
  }
  if (!request) throw new ProtocallError(`${shown} holds no request: add a request line (a URL)`);
  const vars: Record<string, string> = {};
  for (const v of many("var")) {
    const eq = v.indexOf("=");
    if (eq <= 0) throw new ProtocallError(`invalid --var ${JSON.stringify(v)}: write NAME=VALUE`);
    vars[v.slice(0, eq)] = v.slice(eq + 1);
  }
  const context = openRpcContext({
    filePath: full,
    environment: one("env"),
    envFile: one("env-file"),
    processEnv: ctx.env,
    overrides: vars,
  });
  const dataFile = one("data");
  const rows = dataFile !== undefined ? readDataRows(resolve(ctx.cwd, dataFile), dataFile) : undefined;
  // A bad word of a `# @load` line: said at its place, as the editor marks it.
  for (const line of request.load ?? []) {
    const problem = parseLoadLine(line.text).problems[0];
    if (!problem) continue;
    const at = line.valueRange?.start ?? line.range.start;
    throw new ProtocallError(
      `${shown}:${at.line + 1}:${at.character + problem.start + 1}: ${problem.message}`,
    );
  }
  let load: Map<string, string[]>;
  try {
    load = loadOptionValues((request.load ?? []).map((l) => l.text));
  } catch (err) {
    const at = request.load?.[0]?.range.start.line ?? request.range.start.line;
    throw new ProtocallError(`${shown}:${at + 1}: ${(err as Error).message}`);
  }
  return {
    load,
    source: { kind: "file", text, parsed, filePath: full, request, context, rows },
    label: `${shown}: ${request.name?.text ?? `request at line ${request.range.start.line + 1}`}`,
  };
}

/** What the run will do, in words (the first line it prints). */
function runPlan(
  shape: LoadShape,
  one: (name: string) => string | undefined,
  connections: number,
  workers: number,
): string[] {
  const level = (n: number) => (shape.model === "open" ? `${n} requests/s` : `${n} callers`);
  const plan = [
    shape.warmupMs > 0
      ? `warmup ${shape.warmupMs / 1000} s at ${level(shape.start || shape.stages[0].target)}`
      : "",
    // Bounded by --requests alone: the run's length is theirs, not a stage's.
    shape.requests !== undefined && one("duration") === undefined && one("stages") === undefined
      ? `at ${level(shape.start)}`
      : shape.stages
          .map((st, i) => {
            const from = i === 0 ? shape.start : shape.stages[i - 1].target;
            return `${st.durationMs / 1000} s ${from === st.target ? "at" : "ramping to"} ${level(st.target)}`;
          })
          .join(", then "),
    shape.requests !== undefined ? `${shape.requests} requests at most` : "",
    connections > 1 ? `over ${connections} connections` : "",
    workers > 1 ? `in ${workers} worker threads` : "",
  ].filter((x) => x !== "");
  return plan;
}

/** Writes the `--reporter` files: the JSON report, or the self-contained HTML page. */
async function writeReports(
  reporters: { kind: string; file: string }[],
  report: import("../../core/load/report").LoadReport,
  ctx: CliContext,
): Promise<void> {
  for (const rep of reporters) {
    const body =
      rep.kind === "json"
        ? `${JSON.stringify(report, null, 2)}\n`
        : (await import("../../core/load/html-report")).htmlReport(report);
    const path = resolve(ctx.cwd, rep.file);
    try {
      writeFileSync(path, body);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new ProtocallError(
        `--reporter ${rep.kind}=${rep.file}: cannot write ${path}: ${code === "ENOENT" ? "no such directory" : (code ?? String(err))}`,
      );
    }
  }
}
