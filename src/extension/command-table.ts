// Every `protocall.*` command, in one table: its id and the handler it runs (a method of one feature).
// Titles, icons, key bindings and where each command shows (`when`) stay in package.json's
// `contributes`; a test checks that this table and `contributes.commands` list the same ids.
// activate() registers the table with one loop. Handlers return what the command does (an outcome,
// the copied text, …), so `executeCommand` gives it to tests and other extensions.
// Only types are imported: the table is plain data, loaded by the unit test without an editor.
import type { JsonValue } from "@bufbuild/protobuf";
import type * as vscode from "vscode";
import type { ExportFormat } from "../core/webhooks/delivery-export";
import type { ServiceServer } from "../server/protocol";
import type { ReplayTarget } from "./deliveries/api";
import type { Features } from "./features";
import type { ServicesElement } from "./services/tree";
import type { Target } from "./webhooks/prompts";

/** One command: its id and what it runs, given the features and the command's arguments. */
export interface CommandEntry {
  readonly id: string;
  readonly run: (f: Features, ...args: never[]) => unknown;
}

/** Keeps each handler's argument types (for the reader) while the table holds them alike. */
function command<A extends unknown[]>(id: string, run: (f: Features, ...args: A) => unknown): CommandEntry {
  return { id, run: run as unknown as CommandEntry["run"] };
}

export const commandTable: readonly CommandEntry[] = [
  // The shell: output and the language server.
  command("protocall.showOutput", (f) => f.ctx.log.show()),
  command("protocall.restartLanguageServer", (f) => f.ctx.languageServer.restart()),

  // Send, Copy as, the response panel, environments (send/).
  command("protocall.send", (f, uri?: unknown, index?: unknown) => f.send.send(uri, index)),
  command("protocall.copyAsCurl", (f, uri?: unknown, index?: unknown) =>
    f.send.copyAs("protocall", uri, index),
  ),
  command("protocall.copyAsBufCurl", (f, uri?: unknown, index?: unknown) => f.send.copyAs("buf", uri, index)),
  command("protocall.copyAsGrpcurl", (f, uri?: unknown, index?: unknown) =>
    f.send.copyAs("grpcurl", uri, index),
  ),
  command("protocall.selectEnvironment", (f) => f.send.selectEnvironment()),
  command("protocall.showResponse", (f) => f.send.showResponse()),
  command("protocall.acceptSnapshot", (f, uri?: unknown) => f.send.snapshots.accept(uri)),

  // Live streams (live/).
  command("protocall.live.start", (f, uri?: unknown, index?: unknown) => f.live.start(uri, index)),
  command("protocall.live.sendNext", (f, uri?: unknown, index?: unknown, body?: unknown) =>
    f.live.sendNext(uri, index, body),
  ),
  command("protocall.live.sendMessage", (f, text?: unknown, uri?: unknown, index?: unknown) =>
    f.live.sendMessage(text, uri, index),
  ),
  command("protocall.live.closeSend", (f, uri?: unknown, index?: unknown) => f.live.closeSend(uri, index)),
  command("protocall.live.saveSession", (f, uri?: unknown, index?: unknown) =>
    f.live.saveSession(uri, index),
  ),

  // Request files (request-files/).
  command("protocall.pasteAsRequest", (f, text?: unknown) => f.requestFiles.pasteAsRequest(text)),

  // The Services view (services/).
  command("protocall.services.refresh", (f) => f.services.refresh()),
  command("protocall.services.addServer", (f, server?: ServiceServer) => f.services.addServer(server)),
  command("protocall.services.addRegistryModule", (f, spec?: unknown) => f.services.addRegistryModule(spec)),
  command("protocall.services.removeServer", (f, e?: ServicesElement) => f.services.removeServer(e)),
  command("protocall.services.addRequest", (f, e: ServicesElement) => f.services.addRequest(e)),
  command("protocall.services.goToDefinition", (f, e?: ServicesElement) => f.services.goToDefinition(e)),
  command("protocall.services.copyName", (f, e?: ServicesElement) => f.services.copyName(e)),
  command("protocall.services.showDriftReport", (f, e?: ServicesElement) => f.services.showDriftReport(e)),

  // The Webhooks view (webhooks/).
  command("protocall.webhooks.refresh", (f) => f.webhooks.refresh()),
  command("protocall.webhooks.addRegistry", (f) => f.webhooks.addRegistry()),
  command("protocall.webhooks.removeRegistry", (f, t: Target) => f.webhooks.removeRegistry(t)),
  command("protocall.webhooks.signIn", (f, t: Target) => f.webhooks.signIn(t)),
  command("protocall.webhooks.signOut", (f, t: Target) => f.webhooks.signOut(t)),
  command("protocall.webhooks.addRepository", (f, t: Target) => f.webhooks.addRepository(t)),
  command("protocall.webhooks.removeRepository", (f, t: Target) => f.webhooks.removeRepository(t)),
  command("protocall.webhooks.create", (f, t: Target) => f.webhooks.create(t)),
  command("protocall.webhooks.delete", (f, t: Target) => f.webhooks.delete(t)),
  command("protocall.webhooks.copyId", (f, t: Target) => f.webhooks.copyId(t)),
  command("protocall.webhooks.copyCallbackUrl", (f, t: Target) => f.webhooks.copyCallbackUrl(t)),
  command("protocall.webhooks.startLocalRegistry", (f) => f.webhooks.startLocalRegistry()),
  command("protocall.webhooks.stopLocalRegistry", (f) => f.webhooks.stopLocalRegistry()),
  command("protocall.webhooks.push", (f) => f.webhooks.push()),
  command("protocall.webhooks.sendTestPush", (f, event?: JsonValue, to?: unknown) =>
    f.deliveries.sendTestPush(event, to),
  ),

  // The Deliveries view and the listener (deliveries/).
  command("protocall.deliveries.startListener", (f) => f.deliveries.startListenerCommand()),
  command("protocall.deliveries.stopListener", (f) => f.deliveries.stopListenerCommand()),
  command("protocall.deliveries.toggleListener", (f) => f.deliveries.toggleListener()),
  command("protocall.deliveries.refresh", (f) => f.deliveries.refresh()),
  command("protocall.deliveries.open", (f, node?: unknown) => f.deliveries.open(node)),
  command("protocall.deliveries.replay", (f, node?: unknown, to?: ReplayTarget) =>
    f.deliveries.replay(node, to),
  ),
  command("protocall.deliveries.copyJson", (f, node?: unknown) => f.deliveries.copyJson(node)),
  command("protocall.deliveries.export", (f, uri?: vscode.Uri, format?: ExportFormat) =>
    f.deliveries.export(uri, format),
  ),
  command("protocall.deliveries.clear", (f) => f.deliveries.clear()),
];
