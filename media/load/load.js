// The load test panel's script: draws the live charts (latency p50/p99 and throughput per second, as
// plain SVG) from the progress the extension posts, shows the final report, and asks to stop.
(() => {
  const vscode = acquireVsCodeApi();
  const $ = (id) => document.getElementById(id);
  const svgNs = "http://www.w3.org/2000/svg";
  $("stop").addEventListener("click", () => {
    $("stop").disabled = true;
    vscode.postMessage({ action: "stop" });
  });

  /** Draws series of [x, y] points into the SVG `id` (its viewBox is 0 0 400 120). */
  function chart(id, series, unit) {
    const svg = $(id);
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    const all = series.flatMap((s) => s.points);
    const maxX = Math.max(1, ...all.map((p) => p[0]));
    const maxY = Math.max(1e-9, ...all.map((p) => p[1]));
    const x = (v) => 30 + (v / maxX) * 365;
    const y = (v) => 110 - (v / maxY) * 100;
    const axis = document.createElementNS(svgNs, "path");
    axis.setAttribute("d", "M30 5 V110 H395");
    axis.setAttribute("class", "axis");
    svg.appendChild(axis);
    const top = document.createElementNS(svgNs, "text");
    top.setAttribute("x", "2");
    top.setAttribute("y", "12");
    top.setAttribute("class", "label");
    top.textContent = `${maxY >= 100 ? maxY.toFixed(0) : maxY.toPrecision(3)} ${unit}`;
    svg.appendChild(top);
    for (const s of series) {
      if (s.points.length === 0) continue;
      const path = document.createElementNS(svgNs, "path");
      path.setAttribute(
        "d",
        s.points.map((p, i) => `${i ? "L" : "M"}${x(p[0]).toFixed(1)} ${y(p[1]).toFixed(1)}`).join(" "),
      );
      path.setAttribute("class", `line ${s.name}`);
      path.setAttribute("data-points", String(s.points.length));
      svg.appendChild(path);
    }
  }

  function progress(p) {
    $("live").textContent =
      `${(p.elapsedMs / 1000).toFixed(0)} s / ${(p.totalMs / 1000).toFixed(0)} s · ${p.requests} requests · ` +
      `${p.rps.toFixed(0)} req/s · p50 ${p.p50.toFixed(1)} ms · p99 ${p.p99.toFixed(1)} ms · ` +
      `errors ${p.requests - p.passed} · in flight ${p.inFlight}`;
    chart(
      "latency",
      [
        { name: "p50", points: p.ticks.map((t) => [t.second, t.p50]) },
        { name: "p99", points: p.ticks.map((t) => [t.second, t.p99]) },
      ],
      "ms",
    );
    chart("throughput", [{ name: "rps", points: p.ticks.map((t) => [t.second, t.requests]) }], "req/s");
  }

  window.addEventListener("message", (event) => {
    const m = event.data;
    if (m.type === "progress") progress(m);
    else if (m.type === "report") {
      progress(m.progress);
      $("stop").disabled = true;
      $("state").textContent = m.state;
      $("report").textContent = m.text;
    } else if (m.type === "error") {
      $("stop").disabled = true;
      $("state").textContent = "failed";
      $("report").textContent = m.text;
    }
  });
  vscode.postMessage({ action: "ready" });
})();
