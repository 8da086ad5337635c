// demo.v1.DemoService: the four streaming shapes, errors with details, and Inspect.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import {
  type CountRequest,
  type CountResponseSchema,
  type DemoService,
  Detail,
  type FailRequest,
  QuotaExceededSchema,
} from "../gen/demo/v1/demo_pb";
import { BadRequestSchema, ErrorInfoSchema, RetryInfoSchema } from "../gen/google/rpc/error_details_pb";
import { requestInfoKey, serverStateKey } from "./request-info";
import { sampleEverything } from "./sample";

function failure(req: FailRequest): ConnectError {
  const code = req.code === 0 ? Code.Internal : (req.code as number as Code);
  const details = req.details.map((d) => {
    switch (d) {
      case Detail.ERROR_INFO:
        return {
          desc: ErrorInfoSchema,
          value: {
            reason: "DEMO_FAILURE",
            domain: "demo.example.com",
            metadata: { requested: String(code) },
          },
        };
      case Detail.BAD_REQUEST:
        return {
          desc: BadRequestSchema,
          value: { fieldViolations: [{ field: "name", description: "must not be empty" }] },
        };
      case Detail.RETRY_INFO:
        return { desc: RetryInfoSchema, value: { retryDelay: durationFromMs(1500) } };
      case Detail.QUOTA_EXCEEDED:
        return {
          desc: QuotaExceededSchema,
          value: create(QuotaExceededSchema, {
            resource: "requests",
            limit: 100n,
            retryAfter: durationFromMs(30_000),
          }),
        };
      default:
        throw new ConnectError(`unknown detail ${d}`, Code.InvalidArgument);
    }
  });
  // ConnectError's detail type is generic over each detail's schema; the union above is sound.
  return new ConnectError(req.message, code, undefined, details as never);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

async function* count(
  req: CountRequest,
  ctx: HandlerContext,
): AsyncIterable<MessageInitShape<typeof CountResponseSchema>> {
  for (let n = 1; n <= req.count; n++) {
    if (n > 1 && req.delayMs > 0) await sleep(req.delayMs, ctx.signal);
    yield { number: n, text: req.text };
  }
  if (req.errorCode !== 0) {
    throw new ConnectError(`stream ended with code ${req.errorCode}`, req.errorCode as number as Code);
  }
}

export const demoService: ServiceImpl<typeof DemoService> = {
  echo(req) {
    return req;
  },
  oldEcho(req) {
    return req;
  },
  sample(req) {
    return sampleEverything(req.text || "sample");
  },
  count,
  async sum(requests) {
    let sum = 0n;
    let n = 0;
    for await (const r of requests) {
      sum += r.number;
      n++;
    }
    return { sum, count: n };
  },
  async *chat(requests) {
    let n = 0;
    for await (const r of requests) yield { text: r.text, number: ++n };
  },
  fail(req) {
    throw failure(req);
  },
  inspect(req, ctx) {
    const info = ctx.values.get(requestInfoKey);
    const select = (headers: [string, string][], names: string[], allWhenEmpty: boolean) => {
      const wanted = new Set(names.map((n) => n.toLowerCase()));
      return headers
        .filter(([name]) => (allWhenEmpty && wanted.size === 0) || wanted.has(name))
        .map(([name, value], i) => ({ name, value, i }))
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.i - b.i))
        .map(({ name, value }) => ({ name, value }));
    };
    return {
      headers: select(info.headers, req.headerNames, true),
      reflectionHeaders: select(
        ctx.values.get(serverStateKey).lastReflectionHeaders,
        req.reflectionHeaderNames,
        false,
      ),
      httpVersion: info.httpVersion,
      clientCertificate: info.clientCertificate,
      path: info.path,
    };
  },
};
