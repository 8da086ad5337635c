// `--reporter html=FILE`: the load report as one self-contained page (no scripts, no network): the
// totals, a table per stage, and two charts drawn as inline SVG from the report's per-second
// timeline (requests per second against the target; p50 and p99 latency).
import type { LoadReport, StatsSummary } from "./report";

const esc = (s: string) =>
  s.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c] ?? c);

/** A line chart of series over the timeline's seconds. */
function chart(
  title: string,
  unit: string,
  series: { name: string; color: string; values: number[] }[],
): string {
  const w = 720;
  const h = 220;
  const pad = 40;
  const n = Math.max(1, ...series.map((s) => s.values.length));
  const top = Math.max(1, ...series.flatMap((s) => s.values)) * 1.1;
  const x = (i: number) => pad + (n === 1 ? 0 : (i * (w - 2 * pad)) / (n - 1));
  const y = (v: number) => h - pad + (-(h - 2 * pad) * v) / top;
  const lines = series
    .map(
      (s) =>
        `<polyline fill="none" stroke="${s.color}" stroke-width="2" points="${s.values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(" ")}"/>`,
    )
    .join("");
  const legend = series
    .map((s, i) => `<text x="${pad + i * 140}" y="16" fill="${s.color}">${esc(s.name)}</text>`)
    .join("");
  return `<figure><figcaption>${esc(title)}</figcaption><svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" role="img" aria-label="${esc(title)}">
<line x1="${pad}" y1="${h - pad}" x2="${w - pad}" y2="${h - pad}" stroke="#999"/><line x1="${pad}" y1="${pad}" x2="${pad}" y2="${h - pad}" stroke="#999"/>
<text x="4" y="${pad}" font-size="11">${top.toFixed(top < 10 ? 1 : 0)} ${esc(unit)}</text><text x="${pad}" y="${h - pad + 16}" font-size="11">0 s</text><text x="${w - pad - 20}" y="${h - pad + 16}" font-size="11">${n} s</text>
${legend}${lines}</svg></figure>`;
}

function statsTable(s: StatsSummary): string {
  const l = s.latency;
  const row = (k: string, v: string) => `<tr><th>${esc(k)}</th><td>${esc(v)}</td></tr>`;
  return `<table>${row("requests", `${s.requests} (${s.passed} passed, ${s.failed} failed, ${(s.errorRate * 100).toFixed(2)}% errors)`)}${row("requests per second", String(s.rps))}${row("latency (ms)", `min ${l.min} · p50 ${l.p50} · p90 ${l.p90} · p95 ${l.p95} · p99 ${l.p99} · p99.9 ${l.p999} · max ${l.max}`)}${s.firstMessage ? row("first message (ms)", `p50 ${s.firstMessage.p50} · p99 ${s.firstMessage.p99}`) : ""}${row(
    "statuses",
    Object.entries(s.statuses)
      .map(([k, v]) => `${k} ${v}`)
      .join(", "),
  )}${row("bytes", `${s.bytes.sent} sent, ${s.bytes.received} received`)}${Object.entries(s.failedChecks)
    .map(([k, v]) => row("failed check", `${k}: ${v}`))
    .join("")}${s.errors.map((e) => row("error", `${e.message} (${e.count})`)).join("")}</table>`;
}

export function htmlReport(r: LoadReport): string {
  const t = r.timeline;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Load report: ${esc(r.request)}</title>
<style>body{font:14px system-ui,sans-serif;margin:2em;max-width:60em}th{text-align:left;padding-right:1em}figure{margin:1em 0}.bad{color:#b00}</style></head>
<body><h1>Load report</h1><p>${esc(r.request)} · ${esc(r.model === "open" ? "open model (rate)" : "closed model (concurrency)")} · ${(r.elapsedMs / 1000).toFixed(1)} s · started ${esc(r.startedAt)}${r.interrupted ? " · interrupted" : ""}</p>
${r.behind ? `<p class="bad">${esc(r.behind)}</p>` : ""}
${r.thresholds.map((th) => `<p class="${th.passed ? "" : "bad"}">threshold ${esc(th.text)}: ${th.passed ? "held" : "FAILED"} (actual ${th.actual})</p>`).join("")}
<h2>Total</h2>${statsTable(r.total)}
${chart("Requests per second", "req/s", [
  { name: "answered", color: "#1565c0", values: t.map((x) => x.requests) },
  { name: "failed", color: "#c62828", values: t.map((x) => x.failed) },
  ...(r.model === "open" ? [{ name: "target", color: "#888", values: t.map((x) => x.target) }] : []),
])}
${chart("Latency", "ms", [
  { name: "p50", color: "#2e7d32", values: t.map((x) => x.p50) },
  { name: "p99", color: "#ef6c00", values: t.map((x) => x.p99) },
])}
${r.perStage.length > 1 ? r.perStage.map((s, i) => `<h2>Stage ${i + 1}: ${(r.stages[i].durationMs / 1000).toFixed(1)} s to ${r.stages[i].target}</h2>${statsTable(s)}`).join("") : ""}
</body></html>
`;
}
