// "Did you mean …?": the known names closest to a misspelled one. Used for unknown services and
// methods, body keys and enum values, request options, flags and subcommands, so every suggestion
// follows one rule. Plain string code without imports, so the command line's start-up path can use it
// and what suggests names does not load the resolver.

/** Up to three names close to `name`: same simple name, different case, or a small edit distance. */
export function closest(name: string, candidates: Iterable<string>): string[] {
  const lower = name.toLowerCase();
  const simple = (n: string) => n.slice(n.lastIndexOf(".") + 1).toLowerCase();
  const scored: [number, string][] = [];
  for (const candidate of new Set(candidates)) {
    if (candidate === name) continue;
    const c = candidate.toLowerCase();
    let score: number;
    if (c === lower) score = 0;
    else if (simple(candidate) === simple(name)) score = 0.5;
    else {
      const limit = Math.max(2, Math.floor(Math.max(name.length, candidate.length) / 4));
      const sName = simple(name);
      const sCandidate = simple(candidate);
      // The length difference bounds the distance from below: skip the quadratic work when it is too far.
      if (
        Math.min(Math.abs(lower.length - c.length), Math.abs(sName.length - sCandidate.length) + 0.5) > limit
      )
        continue;
      const best = Math.min(editDistance(lower, c), editDistance(sName, sCandidate) + 0.5);
      if (best > limit) continue;
      score = best;
    }
    scored.push([score, candidate]);
  }
  scored.sort((a, b) => a[0] - b[0] || a[1].localeCompare(b[1]));
  return scored.slice(0, 3).map(([, c]) => c);
}

/**
 * Edit distance counting an insertion, a deletion, a substitution or a swap of two neighbouring
 * letters as one edit (optimal string alignment), so "prot" is one edit from "port".
 */
export function editDistance(a: string, b: string): number {
  if (a === b) return 0;
  let before = new Array<number>(b.length + 1).fill(0);
  let prev = new Array<number>(b.length + 1);
  for (let j = 0; j <= b.length; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    const cur = new Array<number>(b.length + 1);
    cur[0] = i;
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        cur[j] = Math.min(cur[j], before[j - 2] + 1);
      }
    }
    before = prev;
    prev = cur;
  }
  return prev[b.length];
}
