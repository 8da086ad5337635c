// An RPC failure as `buf curl` prints it: the Connect error JSON on stderr, indented three spaces, with
// `code`, `message` (left out when empty) and `details` (each with its type, its value as unpadded
// base64 and, when the type is known, the detail decoded as JSON). Go's encoding/json writes it, so
// `<`, `>`, `&`, U+2028 and U+2029 are escaped. The process then exits with the gRPC code × 8.
import { create, type JsonValue, type Message, toBinary } from "@bufbuild/protobuf";
import { base64Encode } from "@bufbuild/protobuf/wire";
import type { ConnectError } from "@connectrpc/connect";
import { codeToString } from "@connectrpc/connect/protocol-connect";
import { formatJsonValue } from "./output";

const INDENT = "   ";

/** The exit code of a failed RPC: its gRPC code shifted left by three bits. */
export function rpcExitCode(err: ConnectError): number {
  return err.code * 8;
}

/**
 * Formats the error JSON, ending with a newline. A detail's `debug` is what the server sent with it
 * (the Connect protocol's error JSON may carry one); like buf, nothing is decoded locally, so gRPC
 * and gRPC-Web details have none.
 */
export function formatRpcError(err: ConnectError): string {
  const entries = [`"code": ${JSON.stringify(codeToString(err.code))}`];
  if (err.rawMessage) entries.push(`"message": ${JSON.stringify(err.rawMessage)}`);
  const details: string[] = [];
  for (const d of err.details) {
    let type: string;
    let value: Uint8Array;
    let debug: JsonValue | undefined;
    if ("desc" in d) {
      type = d.desc.typeName;
      value = toBinary(d.desc, create(d.desc, d.value as never) as Message);
    } else {
      type = d.type;
      value = d.value;
      debug = d.debug;
    }
    const fields = [
      `"type": ${JSON.stringify(type)}`,
      `"value": ${JSON.stringify(base64Encode(value, "std_raw"))}`,
    ];
    if (debug !== undefined && debug !== null)
      fields.push(`"debug": ${indentBlock(formatJsonValue(debug, INDENT), 3)}`);
    details.push(`{\n${INDENT.repeat(3)}${fields.join(`,\n${INDENT.repeat(3)}`)}\n${INDENT.repeat(2)}}`);
  }
  if (details.length > 0) {
    entries.push(`"details": [\n${INDENT.repeat(2)}${details.join(`,\n${INDENT.repeat(2)}`)}\n${INDENT}]`);
  }
  const json = `{\n${INDENT}${entries.join(`,\n${INDENT}`)}\n}\n`;
  return escapeLikeGo(json);
}

/** Re-indents a formatted block so that it sits at the given depth. */
function indentBlock(block: string, depth: number): string {
  return block.replaceAll("\n", `\n${INDENT.repeat(depth)}`);
}

/** Go's encoding/json escapes HTML-sensitive characters and the JavaScript line separators. */
function escapeLikeGo(json: string): string {
  return json.replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
