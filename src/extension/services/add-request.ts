// "Add Request to .rpc File" (a click on a method in the Services view): the language server writes
// the request (the method's comments, its URL, a JSON skeleton of the input message); it is added to
// the active .rpc editor or a new untitled one (rpc-editor.ts), with the cursor in the body. A
// server's requests use its URL (and its protocol, headers and TLS options); a workspace schema's use
// `{{host}}`, defined at the top of the file (as the first configured server, else
// http://localhost:8080) unless the file or the environment file already defines it.
import * as vscode from "vscode";
import { normalizeServerUrl } from "../../core/schema/server-entry";
import { type ServiceRequestTextParams, serviceRequestTextRequest } from "../../server/protocol";
import type { ProtocallContext } from "../context";
import { type AddedRequest, addRequestToEditor } from "../rpc-editor";
import type { NodeElement } from "./tree";

export type { AddedRequest } from "../rpc-editor";

const hostVariable = "host";
const fallbackHost = "http://localhost:8080";

export async function addRequest(
  ctx: ProtocallContext,
  element: NodeElement,
): Promise<AddedRequest | undefined> {
  if (element?.type !== "node" || element.node.kind !== "method") return undefined;
  const server = element.source.server;
  const params: ServiceRequestTextParams = {
    source: element.source.info.id,
    server,
    method: element.node.name,
    baseUrl: server ? normalizeServerUrl(server.url) : `{{${hostVariable}}}`,
  };
  const client = await ctx.languageClient();
  const result = await client.sendRequest(serviceRequestTextRequest, params);
  if (!result.text) {
    void vscode.window.showErrorMessage(result.error ?? `Cannot write a request for ${element.node.name}.`);
    return undefined;
  }
  // The URL `{{host}}` stands for in a new file: the first configured server, else localhost:8080.
  const first = ctx.settings.servers()[0];
  const variable = server
    ? undefined
    : { name: hostVariable, value: first ? normalizeServerUrl(first.url) : fallbackHost };
  return addRequestToEditor(ctx.settings, result.text, variable);
}
