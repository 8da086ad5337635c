// "Did you mean": the names closest to a misspelt one, for every message that suggests a name (unknown
// services and methods, fields in request bodies, enum values). A module of its own, so that what
// suggests names does not load the resolver.

/** Up to three names close to `name`: same simple name, different case, or a small edit distance. */
export function closest(name: string, candidates: string[]): string[] {
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
      const d = editDistance(lower, c);
      const dSimple = editDistance(simple(name), simple(candidate));
      const best = Math.min(d, dSimple + 0.5);
      const limit = Math.max(2, Math.floor(Math.max(name.length, candidate.length) / 4));
      if (best > limit) continue;
      score = best;
    }
    scored.push([score, candidate]);
  }
  scored.sort((a, b) => a[0] - b[0] || a[1].localeCompare(b[1]));
  return scored.slice(0, 3).map(([, c]) => c);
}

function editDistance(a: string, b: string): number {
  if (a === b) return 0;
  const prev = new Array<number>(b.length + 1);
  for (let j = 0; j <= b.length; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0];
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = prev[j];
      prev[j] = Math.min(prev[j] + 1, prev[j - 1] + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return prev[b.length];
}
