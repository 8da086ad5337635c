// The progress of a `--stream-file` upload as people see it: bytes sent of the file's size, the share
// done and the rate, in one line ("[#####---------------]  16.0 MiB / 64.0 MiB  25%  31.2 MiB/s").
// The terminal (protocall curl and run, on stderr when it is a TTY) and the editor (a progress
// notification during Send) both draw this line from a meter that redraws at most every
// `intervalMs`, so a stream of thousands of small chunks costs a handful of redraws.

/** How far a file stream is: bytes handed to the call so far, of the file's size. */
export interface StreamProgress {
  sent: number;
  total: number;
}

/** `1.5 KiB`, `64.0 MiB`, `1.00 GiB` (binary units, as --stream-chunk takes them). */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let v = n / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v.toFixed(u >= 2 ? 2 : 1)} ${units[u]}`;
}

/** The share done, 0..1 (an empty file is done at once). */
export function progressFraction(p: StreamProgress): number {
  return p.total <= 0 ? 1 : Math.min(1, p.sent / p.total);
}

/** The progress line: a bar of `width` cells (none when 0), bytes sent / total, percent, rate. */
export function formatStreamProgress(p: StreamProgress, elapsedMs: number, width = 20): string {
  const fraction = progressFraction(p);
  const filled = Math.floor(fraction * width);
  const bar = width > 0 ? `[${"#".repeat(filled)}${"-".repeat(width - filled)}]  ` : "";
  const rate = elapsedMs > 0 ? `  ${formatBytes(Math.round((p.sent * 1000) / elapsedMs))}/s` : "";
  return `${bar}${formatBytes(p.sent)} / ${formatBytes(p.total)}  ${Math.floor(fraction * 100)}%${rate}`;
}

export interface ProgressMeterOptions {
  /** Draws the line (and the share done, for a bar of the front end's own). */
  draw(line: string, fraction: number): void;
  /** Milliseconds between redraws (default 200); the first and the last state are always drawn. */
  intervalMs?: number;
  /** Bar cells in the line (default 20; 0 for a front end that draws its own bar). */
  width?: number;
  now?: () => number;
}

/** A meter fed every progress report; it draws the first, the last, and at most one per interval between. */
export function createProgressMeter(o: ProgressMeterOptions): (p: StreamProgress) => void {
  const now = o.now ?? Date.now;
  const interval = o.intervalMs ?? 200;
  let started: number | undefined;
  let drawnAt = Number.NEGATIVE_INFINITY;
  return (p) => {
    const t = now();
    started ??= t;
    const done = p.sent >= p.total;
    if (!done && t - drawnAt < interval) return;
    drawnAt = t;
    o.draw(formatStreamProgress(p, t - started, o.width ?? 20), progressFraction(p));
  };
}
