// A request body that cannot be decoded is the client's fault: `invalid_argument`. The Connect
// handler says so for bad JSON but answers `internal` (HTTP 500, gRPC status 13) for binary it cannot
// parse ("parse binary: illegal tag"), the one error its binary codec raises while reading a request.
// The emulator's front passes each handler response through `asClientFault`, which rewrites exactly
// that error (Connect unary JSON body, or gRPC / gRPC-Web status) and leaves every other response as is.
import { Code } from "@connectrpc/connect";
import type { UniversalServerResponse } from "@connectrpc/connect/protocol";

const parseBinary = /^parse binary: /;

async function readAll(body: UniversalServerResponse["body"]): Promise<Uint8Array> {
  if (!body) return new Uint8Array(0);
  if (body instanceof Uint8Array) return body;
  const parts: Uint8Array[] = [];
  for await (const chunk of body) parts.push(chunk);
  return Buffer.concat(parts);
}

/** The response with a request-decoding failure reported as `invalid_argument`. */
export async function asClientFault(res: UniversalServerResponse): Promise<UniversalServerResponse> {
  const grpcStatus = res.trailer?.get("grpc-status") ?? res.header?.get("grpc-status");
  if (grpcStatus !== undefined && grpcStatus !== null) {
    const message = decodeURIComponent(
      res.trailer?.get("grpc-message") ?? res.header?.get("grpc-message") ?? "",
    );
    if (grpcStatus !== String(Code.Internal) || !parseBinary.test(message)) return res;
    const fix = (h: Headers | undefined) => {
      if (!h?.has("grpc-status")) return h;
      const copy = new Headers(h);
      copy.set("grpc-status", String(Code.InvalidArgument));
      return copy;
    };
    return { ...res, header: fix(res.header), trailer: fix(res.trailer) };
  }
  if (res.status !== 500 || !/^application\/json/i.test(res.header?.get("content-type") ?? "")) return res;
  const bytes = await readAll(res.body);
  let parsed: { code?: string; message?: string } | undefined;
  try {
    parsed = JSON.parse(Buffer.from(bytes).toString("utf8")) as { code?: string; message?: string };
  } catch {
    parsed = undefined;
  }
  if (parsed?.code !== "internal" || !parseBinary.test(parsed.message ?? "")) {
    return {
      ...res,
      body: (async function* () {
        yield bytes;
      })(),
    };
  }
  const body = Buffer.from(JSON.stringify({ ...parsed, code: "invalid_argument" }));
  const header = new Headers(res.header);
  header.set("content-length", String(body.byteLength));
  return {
    ...res,
    status: 400,
    header,
    body: (async function* () {
      yield body;
    })(),
  };
}
