// The path syntax of `# @snapshot ignore <paths>`: where a value sits in a stored response
// (core/assertions/snapshot.ts). `messages[0].id`, `messages[*].createdAt`, `error.details[*]`,
// `headers.x-request-id`, `messages[*]["odd key"]`. Paths are the ones the snapshot diff prints, so a
// changing value a failed run names can be pasted into an ignore list as it is; `[*]` and `.*`
// match every element or key.

/** One step of a path: an object key, an array index, or any of them (`*`). */
export type SnapshotStep = { key: string } | { index: number } | { any: true };

const step = /^(?:\.([A-Za-z_$][\w$-]*|\*)|\[(\d+|\*)\]|\[("(?:[^"\\]|\\.)*")\])/;
const first = /^([A-Za-z_$][\w$-]*|\*)/;

/** The steps of a path; undefined when it is not one. */
export function parseSnapshotPath(path: string): SnapshotStep[] | undefined {
  const head = first.exec(path);
  if (!head) return undefined;
  const steps: SnapshotStep[] = [head[1] === "*" ? { any: true } : { key: head[1] }];
  let rest = path.slice(head[0].length);
  while (rest !== "") {
    const m = step.exec(rest);
    if (!m) return undefined;
    if (m[1] !== undefined) steps.push(m[1] === "*" ? { any: true } : { key: m[1] });
    else if (m[2] !== undefined) steps.push(m[2] === "*" ? { any: true } : { index: Number(m[2]) });
    else steps.push({ key: JSON.parse(m[3]) as string });
    rest = rest.slice(m[0].length);
  }
  return steps;
}

/** Why a path cannot be used, with how to write it; undefined when it can. */
export function snapshotPathProblem(path: string): string | undefined {
  if (parseSnapshotPath(path)) return undefined;
  return `"${path}" is not a path; write one as the snapshot diff prints it, such as messages[*].id, error.message or headers.date`;
}

/** A path's text for a step list, as the diff prints it (the inverse of parseSnapshotPath). */
export function showSnapshotPath(steps: readonly (string | number)[]): string {
  let out = "";
  for (const s of steps) {
    if (typeof s === "number") out += `[${s}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(s)) out += out === "" ? s : `.${s}`;
    else out += `[${JSON.stringify(s)}]`;
  }
  return out;
}
