// Batching of byte chunks for request bodies.

const NOT_READY = Symbol("not ready");

/**
 * Joins request chunks that are already available into one write (up to 64 KiB), so that a stream of
 * many small messages does not cost one socket write each. A chunk that is not ready yet (waiting on
 * stdin, for example) never delays what is already there: interactive streams stay interactive.
 */
export async function* coalesce(src: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  const it = src[Symbol.asyncIterator]();
  let pending: Promise<IteratorResult<Uint8Array>> | undefined;
  for (;;) {
    const first = await (pending ?? it.next());
    pending = undefined;
    if (first.done) return;
    const parts: Uint8Array[] = [first.value];
    let size = first.value.byteLength;
    let done = false;
    // One macrotask turn per batch: whatever resolves before it (microtasks only) joins the batch.
    let turned = false;
    const turn = new Promise<typeof NOT_READY>((ok) =>
      setImmediate(() => {
        turned = true;
        ok(NOT_READY);
      }),
    );
    while (size < 65536 && !turned) {
      const next = it.next();
      const r = await Promise.race([next, turn]);
      if (r === NOT_READY) {
        pending = next;
        break;
      }
      if (r.done) {
        done = true;
        break;
      }
      parts.push(r.value);
      size += r.value.byteLength;
    }
    yield parts.length === 1 ? parts[0] : Buffer.concat(parts, size);
    if (done) return;
  }
}
