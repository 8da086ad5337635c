// Waiting on a step that cannot be stopped from outside (a dial, a TLS handshake, a reflection
// answer, a compiler run) only as long as a signal allows: the caller moves on with the signal's
// reason, and whoever owns the step cleans it up (a transport closes its sockets, a call its
// connections).

/** The step's result, or the signal's reason as soon as it aborts. */
export function untilAborted<T>(step: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return step;
  if (signal.aborted) {
    step.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const stop = () => reject(signal.reason);
    signal.addEventListener("abort", stop, { once: true });
    step.then(
      (v) => {
        signal.removeEventListener("abort", stop);
        resolve(v);
      },
      (err) => {
        signal.removeEventListener("abort", stop);
        reject(err);
      },
    );
  });
}
