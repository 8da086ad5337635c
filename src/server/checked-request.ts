// Registers a handler of one of our custom requests (protocol.ts) that first checks the parameters as
// they arrive: a client that sends the wrong shape gets an InvalidParams error naming the method and
// the field (e.g. `protocall/serviceChildren: params.source must be a string, not number 3`) instead
// of a handler failing somewhere inside with a TypeError.
import { type Connection, ErrorCodes, type RequestType, ResponseError } from "vscode-languageserver";
import { paramsChecks } from "./protocol";

export function onCheckedRequest<P, R>(
  connection: Connection,
  type: RequestType<P, R, void>,
  handler: (params: P) => R | Promise<R>,
): void {
  const check = paramsChecks[type.method];
  if (!check) throw new Error(`no parameter check for ${type.method} in protocol.ts`);
  connection.onRequest(type, (params: P) => {
    const problem = check(params, "params");
    if (problem) throw new ResponseError(ErrorCodes.InvalidParams, `${type.method}: ${problem}`);
    return handler(params);
  });
}
