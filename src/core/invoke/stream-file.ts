// `--stream-file FIELD=PATH` (`# @stream-file data=./video.bin`): a client or bidi stream fed from a
// file in chunks of `--stream-chunk` bytes (default 64 KiB), one request message per chunk with the
// chunk in the bytes field FIELD. The file is read as the stream is sent (a read only when the call
// asks for the next message, so HTTP/2 flow control paces the disk), so memory stays flat whatever
// the file's size. Each chunk becomes a request document like one of `-d` (request-data.ts), so the
// rest of the pipeline is the same.
import { createReadStream, statSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { ProtocallError } from "../errors";
import type { RequestDocument } from "./request-data";
import type { StreamProgress } from "./stream-progress";

/** The default chunk size. */
export const defaultStreamChunk = 64 * 1024;

/** FIELD and PATH of a `--stream-file` value; throws ProtocallError for one that is not `FIELD=PATH`. */
export function parseStreamFile(value: string): { field: string; path: string } {
  const eq = value.indexOf("=");
  const field = eq < 0 ? "" : value.slice(0, eq).trim();
  const path = eq < 0 ? "" : value.slice(eq + 1).trim();
  if (!/^[A-Za-z_][\w]*$/.test(field) || path === "") {
    throw new ProtocallError(
      `invalid --stream-file "${value}": write FIELD=PATH, the bytes field of the request message that carries each chunk and the file, such as data=./video.bin`,
    );
  }
  return { field, path };
}

/** Reads a size: bytes, or with KiB / MiB (`64KiB`, `1MiB`); throws ProtocallError naming the flag. */
export function parseChunkSize(value: string): number {
  const m = /^(\d+)\s*(b|kib|k|mib|m)?$/i.exec(value.trim());
  const unit = (m?.[2] ?? "b").toLowerCase()[0];
  const bytes = m ? Number(m[1]) * (unit === "k" ? 1024 : unit === "m" ? 1024 * 1024 : 1) : Number.NaN;
  if (!Number.isSafeInteger(bytes) || bytes < 1 || bytes > 64 * 1024 * 1024) {
    throw new ProtocallError(
      `invalid --stream-chunk "${value}": write a size from 1 byte to 64MiB, such as 65536, 64KiB or 1MiB`,
    );
  }
  return bytes;
}

/**
 * The request documents of a `--stream-file` value: one per chunk, read lazily. `onProgress` hears
 * the bytes sent: 0 before the first chunk, then each chunk once the call has taken it (asked for
 * the next one, or ended the stream).
 */
export function streamFileDocuments(
  value: string,
  chunk: number | undefined,
  cwd: string,
  onProgress?: (p: StreamProgress) => void,
): AsyncGenerator<RequestDocument> & { label: string } {
  const { field, path } = parseStreamFile(value);
  const full = isAbsolute(path) ? path : resolve(cwd, path);
  let size: number;
  try {
    const st = statSync(full);
    if (!st.isFile()) throw Object.assign(new Error("not a file"), { code: "EISDIR" });
    size = st.size;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ProtocallError(
      `--stream-file ${path}: ${code === "ENOENT" ? "no such file" : code === "EISDIR" ? "it is not a file" : (code ?? String(err))}`,
    );
  }
  const chunkSize = chunk ?? defaultStreamChunk;
  const gen = (async function* () {
    let index = 0;
    let sent = 0;
    onProgress?.({ sent, total: size });
    // highWaterMark = the chunk size: each read is one message, and the next read waits for the call.
    const stream = createReadStream(full, { highWaterMark: chunkSize });
    try {
      let pending: Buffer[] = [];
      let pendingBytes = 0;
      for await (const piece of stream as AsyncIterable<Buffer>) {
        pending.push(piece);
        pendingBytes += piece.length;
        while (pendingBytes >= chunkSize) {
          const all = pending.length === 1 ? pending[0] : Buffer.concat(pending);
          const out = all.subarray(0, chunkSize);
          const rest = all.subarray(chunkSize);
          pending = rest.length > 0 ? [rest] : [];
          pendingBytes = rest.length;
          yield { value: { [field]: out.toString("base64") }, line: 1, column: 1, index: index++ };
          sent += out.length;
          onProgress?.({ sent, total: size });
        }
      }
      if (pendingBytes > 0 || (index === 0 && size === 0)) {
        const last = Buffer.concat(pending);
        yield { value: { [field]: last.toString("base64") }, line: 1, column: 1, index: index++ };
        sent += last.length;
        onProgress?.({ sent, total: size });
      }
    } finally {
      stream.destroy();
    }
  })();
  return Object.assign(gen, { label: `--stream-file ${path}` });
}
