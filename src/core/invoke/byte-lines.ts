// Reads lines from the front of a byte stream and hands back the rest of the stream untouched, so a
// file (or stdin) can hold headers, a blank line, then request data that is streamed on.

const NL = 0x0a;

export class ByteLines {
  private buf: Uint8Array = new Uint8Array(0);
  private done = false;
  private readonly it: AsyncIterator<Uint8Array>;
  private readonly decoder = new TextDecoder("utf-8");

  constructor(source: AsyncIterable<Uint8Array | string>) {
    const inner = source[Symbol.asyncIterator]();
    this.it = {
      next: async () => {
        const r = await inner.next();
        if (r.done) return r;
        const v = r.value;
        return { done: false, value: typeof v === "string" ? Buffer.from(v) : v };
      },
      return: async () => {
        await inner.return?.();
        return { done: true, value: undefined };
      },
    };
  }

  /** The next line without its `\n` (a trailing `\r` is kept), or undefined at the end. */
  async line(): Promise<string | undefined> {
    for (;;) {
      const i = this.buf.indexOf(NL);
      if (i >= 0) {
        const line = this.decoder.decode(this.buf.subarray(0, i));
        this.buf = this.buf.subarray(i + 1);
        return line;
      }
      if (this.done) {
        if (this.buf.length === 0) return undefined;
        const line = this.decoder.decode(this.buf);
        this.buf = new Uint8Array(0);
        return line;
      }
      const r = await this.it.next();
      if (r.done) this.done = true;
      else this.buf = this.buf.length === 0 ? r.value : Buffer.concat([this.buf, r.value]);
    }
  }

  /** Everything after the lines read so far, as a stream. */
  rest(): AsyncIterable<Uint8Array> {
    const head = this.buf;
    const it = this.it;
    const done = this.done;
    this.buf = new Uint8Array(0);
    return {
      async *[Symbol.asyncIterator]() {
        if (head.length > 0) yield head;
        if (done) return;
        for (;;) {
          const r = await it.next();
          if (r.done) return;
          yield r.value;
        }
      },
    };
  }

  /** Stops reading the underlying stream. */
  async close(): Promise<void> {
    await this.it.return?.();
  }
}
