// A latency histogram for load runs, in microseconds, laid out exactly as HdrHistogram lays out one
// with 3 significant digits and a lowest value of 1 (2048 sub-buckets, each power of two above 2048
// adding 1024 buckets). Recording is one array increment, so memory stays flat however long a run
// is, and the counts are HdrHistogram's own: `encodeHdr` (hdr-encoding.ts) writes them in the
// standard compressed form that HdrHistogram tools and distributed runners merge. Written here rather
// than taken from a package: the whole of what a load run needs is ~100 lines, and recording stays
// a typed-array increment with no allocation on the hot path.

/** Values up to 2^36 µs (~19 hours) are recorded exactly to 3 digits; larger ones are clamped. */
const SUB_BUCKET_HALF = 1024;
const SUB_BUCKET_COUNT = 2048;
const BUCKETS = 26;
/** Highest value the layout tracks, µs. */
export const HIGHEST_TRACKABLE = 2 ** 36 - 1;
const LENGTH = (BUCKETS + 1) * SUB_BUCKET_HALF;

/** Index of the counts array for a value (HdrHistogram's countsArrayIndex, unit magnitude 0). */
export function indexOf(value: number): number {
  const v = Math.max(0, Math.min(HIGHEST_TRACKABLE, Math.floor(value)));
  if (v < SUB_BUCKET_COUNT) return v;
  const magnitude = Math.floor(Math.log2(v));
  const bucket = magnitude - 10;
  // log2 of a float can round up at an exact power boundary; correct it.
  const b =
    2 ** bucket * SUB_BUCKET_COUNT <= v
      ? bucket + 1
      : 2 ** bucket * SUB_BUCKET_HALF > v
        ? bucket - 1
        : bucket;
  const sub = Math.floor(v / 2 ** b);
  return b * SUB_BUCKET_HALF + sub;
}

/** The lowest value that lands at an index. */
export function lowestAt(index: number): number {
  if (index < SUB_BUCKET_COUNT) return index;
  const b = Math.floor(index / SUB_BUCKET_HALF) - 1;
  const sub = index - b * SUB_BUCKET_HALF;
  return sub * 2 ** b;
}

/** The highest value that lands at an index (what HdrHistogram reports for a percentile). */
export function highestAt(index: number): number {
  if (index < SUB_BUCKET_COUNT) return index;
  const b = Math.floor(index / SUB_BUCKET_HALF) - 1;
  return lowestAt(index) + 2 ** b - 1;
}

export class Histogram {
  readonly counts = new Float64Array(LENGTH);
  count = 0;
  min = Number.POSITIVE_INFINITY;
  max = 0;
  sum = 0;

  /** Records one value in µs. */
  record(us: number): void {
    const v = Math.max(us, 0);
    this.counts[indexOf(v)]++;
    this.count++;
    this.sum += v;
    if (v < this.min) this.min = v;
    if (v > this.max) this.max = v;
  }

  /** Adds every value of another histogram (a stage into the total, a worker's into the run's). */
  add(other: Histogram): void {
    if (other.count === 0) return;
    for (let i = 0; i < LENGTH; i++) if (other.counts[i] !== 0) this.counts[i] += other.counts[i];
    this.count += other.count;
    this.sum += other.sum;
    if (other.min < this.min) this.min = other.min;
    if (other.max > this.max) this.max = other.max;
  }

  reset(): void {
    this.counts.fill(0);
    this.count = 0;
    this.min = Number.POSITIVE_INFINITY;
    this.max = 0;
    this.sum = 0;
  }

  /** The value at a percentile (0–100), µs: the highest value equivalent to it, capped at the max. */
  percentile(p: number): number {
    if (this.count === 0) return 0;
    const wanted = Math.max(1, Math.ceil((Math.min(100, Math.max(0, p)) / 100) * this.count));
    let seen = 0;
    for (let i = 0; i < LENGTH; i++) {
      seen += this.counts[i];
      if (seen >= wanted) return Math.min(this.max, Math.max(this.min, highestAt(i)));
    }
    return this.max;
  }

  mean(): number {
    return this.count === 0 ? 0 : this.sum / this.count;
  }
}
