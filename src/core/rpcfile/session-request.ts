// "Save Session as Request": what a live stream sent, written as a new request of the same file. The
// new request keeps the original's lines up to its body (options, assertions, the request line and
// headers, with `{{…}}` references as written, so it follows the environment as the original does),
// is named after it, and has one body document per message sent, in order. Appended after the last
// request by appendRequest (the same layout as Add Request).
import { type AppendResult, appendRequest } from "./append-request";
import { parseRpcFile } from "./parse";
import { requestLabel } from "./to-curl";

export interface SessionRequest {
  /** The name of the new request (its `###` line). */
  name: string;
  /** The request block, ending with a newline. */
  text: string;
  /** How to add it to the file's text. */
  append: AppendResult;
}

/**
 * The request that sends `messages` (JSON values, in the order they were sent) like the request at
 * `requestIndex` of `fileText`. `when` names the session (e.g. its start time).
 */
export function sessionRequest(
  fileText: string,
  requestIndex: number,
  messages: readonly unknown[],
  when: string,
): SessionRequest {
  const file = parseRpcFile(fileText);
  const request = file.requests[requestIndex];
  if (!request) throw new Error(`the file has no request #${requestIndex + 1} any more`);
  const lines = fileText.split(/\r?\n/);
  const first = request.range.start.line;
  const end = request.bodyRange ? request.bodyRange.start.line - 1 : request.range.end.line;
  const head = lines.slice(first, end + 1);
  while (head.length > 0 && head[head.length - 1].trim() === "") head.pop();
  const name = `${requestLabel(request)} (session ${when})`;
  if (request.separator) head.shift();
  // A `# @name` option would name the copy like the original: the ### line names it instead.
  const kept = head.filter((l) => !/^\s*(#|\/\/)\s*@name\b/.test(l));
  const body = messages.map((m) => JSON.stringify(m)).join("\n");
  const text = `### ${name}\n${kept.join("\n")}\n${body ? `\n${body}\n` : ""}`;
  return { name, text, append: appendRequest(fileText, text) };
}
