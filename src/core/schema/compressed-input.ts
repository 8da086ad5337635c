// Compressed schema inputs. buf writes images compressed when the output name ends in .gz or .zst
// (`buf build -o image.binpb.gz`), and buf accepts them back; so do we, telling them by their magic
// bytes rather than by their name.
import * as zlib from "node:zlib";
import { errorMessage, ProtocallError } from "../errors";

export type Compression = "gzip" | "zstd";

/** The largest decompressed schema accepted (a bound against decompression bombs). */
const maxDecompressedBytes = 2 ** 31 - 1;

/** The compression of content that starts with `head`, from its magic bytes; undefined when none. */
export function detectCompression(head: Uint8Array): Compression | undefined {
  if (head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b) return "gzip";
  if (head.length >= 4 && head[0] === 0x28 && head[1] === 0xb5 && head[2] === 0x2f && head[3] === 0xfd) {
    return "zstd";
  }
  return undefined;
}

type ZstdDecompress = (input: Uint8Array, options?: { maxOutputLength?: number }) => Buffer;

/**
 * Decompresses gzip or zstd content (zstd needs a Node.js with zstd support); returns other content
 * unchanged. `label` names the input in errors, e.g. `descriptor set api.binpb.gz`.
 */
export function decompressSchemaBytes(bytes: Uint8Array, label: string): Uint8Array {
  const compression = detectCompression(bytes);
  if (compression === undefined) return bytes;
  try {
    if (compression === "gzip") {
      return new Uint8Array(zlib.gunzipSync(bytes, { maxOutputLength: maxDecompressedBytes }));
    }
    const zstd = (zlib as unknown as { zstdDecompressSync?: ZstdDecompress }).zstdDecompressSync;
    if (zstd === undefined) {
      throw new ProtocallError(
        `${label} is zstd-compressed, which this Node.js ${process.version} cannot read; ` +
          "decompress it first (zstd -d), or write the image uncompressed or as .gz (buf build -o set.binpb.gz)",
      );
    }
    return new Uint8Array(zstd(bytes, { maxOutputLength: maxDecompressedBytes }));
  } catch (err) {
    if (err instanceof ProtocallError) throw err;
    if ((err as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE") {
      throw new ProtocallError(`${label} is ${compression}-compressed and too large once decompressed`);
    }
    throw new ProtocallError(
      `${label} is ${compression}-compressed but cannot be decompressed (${errorMessage(err)}); is it truncated?`,
    );
  }
}
