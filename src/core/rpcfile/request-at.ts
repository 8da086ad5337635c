// Finds the request of a parsed `.rpc` file at a position, for code lenses, hover and "send request".
import type { Position, RpcFile, RpcRequest } from "./types";

/** The request whose range holds the line of `position`; requests are in file order, so a binary search. */
export function requestAt(file: RpcFile, position: Position): RpcRequest | undefined {
  const line = position.line;
  let lo = 0;
  let hi = file.requests.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const r = file.requests[mid].range;
    if (line < r.start.line) hi = mid - 1;
    else if (line > r.end.line) lo = mid + 1;
    else return file.requests[mid];
  }
  return undefined;
}
