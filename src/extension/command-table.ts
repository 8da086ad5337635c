// Every `protocall.*` command, in one table: its id and the handler it runs (a method of one feature).
// Titles, icons, key bindings and where each command shows (`when`) stay in package.json's
// `contributes`; a test checks that this table and `contributes.commands` list the same ids.
// activate() registers the table with one loop. Handlers return what the command does (an outcome,
// the copied text, …), so `executeCommand` gives it to tests and other extensions.
// Only types (and the two ids the language server shares) are imported: the table is plain data,
// loaded by the unit test without an editor.
import type { JsonValue } from "@bufbuild/protobuf";
import type * as vscode from "vscode";
import type { ExportFormat } from "../core/webhooks/delivery-export";
import {
  callStubCommand,
  copyAsCurlCommand,
  loadTestCommand,
  type ServiceServer,
  sendCommand,
} from "../server/protocol";
import type { ReplayTarget } from "./deliveries/api";
import type { Features } from "./features";
import type { LoadAnswers } from "./load/load-feature";
import type { ServicesElement } from "./services/tree";
import type { Target } from "./webhooks/prompts";

/**
 * Every command id, as a constant: code that names a command (a tree item's or a lens's command, a
 * status bar item, `executeCommand`) takes it from here, never writes the string. The language server
 * names the commands its lenses run from `src/server/protocol.ts`, which these reuse.
 */
export const commandIds = {
  showOutput: "protocall.showOutput",
  restartLanguageServer: "protocall.restartLanguageServer",
  send: sendCommand,
  copyAsCurl: copyAsCurlCommand,
  copyAsBufCurl: "protocall.copyAsBufCurl",
  copyAsGrpcurl: "protocall.copyAsGrpcurl",
  selectEnvironment: "protocall.selectEnvironment",
  showResponse: "protocall.showResponse",
  acceptSnapshot: "protocall.acceptSnapshot",
  liveStart: "protocall.live.start",
  liveSendNext: "protocall.live.sendNext",
  liveSendMessage: "protocall.live.sendMessage",
  liveCloseSend: "protocall.live.closeSend",
  liveSaveSession: "protocall.live.saveSession",
  pasteAsRequest: "protocall.pasteAsRequest",
  servicesRefresh: "protocall.services.refresh",
  servicesAddServer: "protocall.services.addServer",
  servicesAddRegistryModule: "protocall.services.addRegistryModule",
  servicesRemoveServer: "protocall.services.removeServer",
  servicesAddRequest: "protocall.services.addRequest",
  servicesGoToDefinition: "protocall.services.goToDefinition",
  servicesCopyName: "protocall.services.copyName",
  servicesShowDriftReport: "protocall.services.showDriftReport",
  webhooksRefresh: "protocall.webhooks.refresh",
  webhooksAddRegistry: "protocall.webhooks.addRegistry",
  webhooksRemoveRegistry: "protocall.webhooks.removeRegistry",
  webhooksSignIn: "protocall.webhooks.signIn",
  webhooksSignOut: "protocall.webhooks.signOut",
  oauthSignOut: "protocall.oauth.signOut",
  webhooksAddRepository: "protocall.webhooks.addRepository",
  webhooksRemoveRepository: "protocall.webhooks.removeRepository",
  webhooksCreate: "protocall.webhooks.create",
  webhooksDelete: "protocall.webhooks.delete",
  webhooksCopyId: "protocall.webhooks.copyId",
  webhooksCopyCallbackUrl: "protocall.webhooks.copyCallbackUrl",
  webhooksStartLocalRegistry: "protocall.webhooks.startLocalRegistry",
  webhooksStopLocalRegistry: "protocall.webhooks.stopLocalRegistry",
  webhooksPush: "protocall.webhooks.push",
  webhooksSendTestPush: "protocall.webhooks.sendTestPush",
  deliveriesStartListener: "protocall.deliveries.startListener",
  deliveriesStopListener: "protocall.deliveries.stopListener",
  deliveriesToggleListener: "protocall.deliveries.toggleListener",
  deliveriesRefresh: "protocall.deliveries.refresh",
  deliveriesOpen: "protocall.deliveries.open",
  deliveriesReplay: "protocall.deliveries.replay",
  deliveriesCopyJson: "protocall.deliveries.copyJson",
  deliveriesExport: "protocall.deliveries.export",
  deliveriesClear: "protocall.deliveries.clear",
  trafficStartProxy: "protocall.traffic.startProxy",
  trafficStopProxy: "protocall.traffic.stopProxy",
  trafficOpen: "protocall.traffic.open",
  trafficSaveAsRequest: "protocall.traffic.saveAsRequest",
  trafficSaveAsStub: "protocall.traffic.saveAsStub",
  trafficReplay: "protocall.traffic.replay",
  mockStart: "protocall.mock.start",
  mockStop: "protocall.mock.stop",
  mockReset: "protocall.mock.reset",
  mockOpenCall: "protocall.mock.openCall",
  mockCallStub: callStubCommand,
  loadTest: loadTestCommand,
} as const;

/** A command id of the table. */
export type CommandId = (typeof commandIds)[keyof typeof commandIds];

/** One command: its id and what it runs, given the features and the command's arguments. */
export interface CommandEntry {
  readonly id: CommandId;
  readonly run: (f: Features, ...args: never[]) => unknown;
}

/** Keeps each handler's argument types (for the reader) while the table holds them alike. */
function command<A extends unknown[]>(
  id: CommandId,
  run: (f: Features, ...args: A) => unknown,
): CommandEntry {
  return { id, run: run as unknown as CommandEntry["run"] };
}

export const commandTable: readonly CommandEntry[] = [
  // The shell: output and the language server.
  command(commandIds.showOutput, (f) => f.ctx.log.show()),
  command(commandIds.restartLanguageServer, (f) => f.ctx.languageServer.restart()),

  // Send, Copy as, the response panel, environments (send/).
  command(commandIds.send, (f, uri?: unknown, index?: unknown) => f.send.send(uri, index)),
  command(commandIds.copyAsCurl, (f, uri?: unknown, index?: unknown) =>
    f.send.copyAs("protocall", uri, index),
  ),
  command(commandIds.copyAsBufCurl, (f, uri?: unknown, index?: unknown) => f.send.copyAs("buf", uri, index)),
  command(commandIds.copyAsGrpcurl, (f, uri?: unknown, index?: unknown) =>
    f.send.copyAs("grpcurl", uri, index),
  ),
  command(commandIds.selectEnvironment, (f) => f.send.selectEnvironment()),
  command(commandIds.showResponse, (f) => f.send.showResponse()),
  command(commandIds.acceptSnapshot, (f, uri?: unknown) => f.send.snapshots.accept(uri)),

  // Live streams (live/).
  command(commandIds.liveStart, (f, uri?: unknown, index?: unknown) => f.live.start(uri, index)),
  command(commandIds.liveSendNext, (f, uri?: unknown, index?: unknown, body?: unknown) =>
    f.live.sendNext(uri, index, body),
  ),
  command(commandIds.liveSendMessage, (f, text?: unknown, uri?: unknown, index?: unknown) =>
    f.live.sendMessage(text, uri, index),
  ),
  command(commandIds.liveCloseSend, (f, uri?: unknown, index?: unknown) => f.live.closeSend(uri, index)),
  command(commandIds.liveSaveSession, (f, uri?: unknown, index?: unknown) => f.live.saveSession(uri, index)),

  // Request files (request-files/).
  command(commandIds.pasteAsRequest, (f, text?: unknown) => f.requestFiles.pasteAsRequest(text)),

  // The Services view (services/).
  command(commandIds.servicesRefresh, (f) => f.services.refresh()),
  command(commandIds.servicesAddServer, (f, server?: ServiceServer) => f.services.addServer(server)),
  command(commandIds.servicesAddRegistryModule, (f, spec?: unknown) => f.services.addRegistryModule(spec)),
  command(commandIds.servicesRemoveServer, (f, e?: ServicesElement) => f.services.removeServer(e)),
  command(commandIds.servicesAddRequest, (f, e: ServicesElement) => f.services.addRequest(e)),
  command(commandIds.servicesGoToDefinition, (f, e?: ServicesElement) => f.services.goToDefinition(e)),
  command(commandIds.servicesCopyName, (f, e?: ServicesElement) => f.services.copyName(e)),
  command(commandIds.servicesShowDriftReport, (f, e?: ServicesElement) => f.services.showDriftReport(e)),

  // The Webhooks view (webhooks/).
  command(commandIds.webhooksRefresh, (f) => f.webhooks.refresh()),
  command(commandIds.webhooksAddRegistry, (f) => f.webhooks.addRegistry()),
  command(commandIds.webhooksRemoveRegistry, (f, t: Target) => f.webhooks.removeRegistry(t)),
  command(commandIds.webhooksSignIn, (f, t: Target) => f.webhooks.signIn(t)),
  command(commandIds.webhooksSignOut, (f, t: Target) => f.webhooks.signOut(t)),
  command(commandIds.oauthSignOut, (f, which?: unknown) => f.send.signOutOAuth(which)),
  command(commandIds.webhooksAddRepository, (f, t: Target) => f.webhooks.addRepository(t)),
  command(commandIds.webhooksRemoveRepository, (f, t: Target) => f.webhooks.removeRepository(t)),
  command(commandIds.webhooksCreate, (f, t: Target) => f.webhooks.create(t)),
  command(commandIds.webhooksDelete, (f, t: Target) => f.webhooks.delete(t)),
  command(commandIds.webhooksCopyId, (f, t: Target) => f.webhooks.copyId(t)),
  command(commandIds.webhooksCopyCallbackUrl, (f, t: Target) => f.webhooks.copyCallbackUrl(t)),
  command(commandIds.webhooksStartLocalRegistry, (f) => f.webhooks.startLocalRegistry()),
  command(commandIds.webhooksStopLocalRegistry, (f) => f.webhooks.stopLocalRegistry()),
  command(commandIds.webhooksPush, (f) => f.webhooks.push()),
  command(commandIds.webhooksSendTestPush, (f, event?: JsonValue, to?: unknown) =>
    f.deliveries.sendTestPush(event, to),
  ),

  // The Deliveries view and the listener (deliveries/).
  command(commandIds.deliveriesStartListener, (f) => f.deliveries.startListenerCommand()),
  command(commandIds.deliveriesStopListener, (f) => f.deliveries.stopListenerCommand()),
  command(commandIds.deliveriesToggleListener, (f) => f.deliveries.toggleListener()),
  command(commandIds.deliveriesRefresh, (f) => f.deliveries.refresh()),
  command(commandIds.deliveriesOpen, (f, node?: unknown) => f.deliveries.open(node)),
  command(commandIds.deliveriesReplay, (f, node?: unknown, to?: ReplayTarget) =>
    f.deliveries.replay(node, to),
  ),
  command(commandIds.deliveriesCopyJson, (f, node?: unknown) => f.deliveries.copyJson(node)),
  command(commandIds.deliveriesExport, (f, uri?: vscode.Uri, format?: ExportFormat) =>
    f.deliveries.export(uri, format),
  ),
  command(commandIds.deliveriesClear, (f) => f.deliveries.clear()),

  // The Traffic view and the proxy (traffic/).
  command(commandIds.trafficStartProxy, (f, arg?: unknown) => f.traffic.startProxy(arg)),
  command(commandIds.trafficStopProxy, (f) => f.traffic.stopProxy()),
  command(commandIds.trafficOpen, (f, node?: unknown) => f.traffic.open(node)),
  command(commandIds.trafficSaveAsRequest, (f, node?: unknown, uri?: vscode.Uri) =>
    f.traffic.saveAsRequest(node, uri),
  ),
  command(commandIds.trafficSaveAsStub, (f, node?: unknown, uri?: vscode.Uri) =>
    f.traffic.saveAsStub(node, uri),
  ),
  command(commandIds.trafficReplay, (f, node?: unknown, to?: string) => f.traffic.replay(node, to)),
  // The mock server and the Mock Calls view (mock/).
  command(commandIds.mockStart, (f, from?: unknown) => f.mock.start(from)),
  command(commandIds.mockStop, (f) => f.mock.stop()),
  command(commandIds.mockReset, (f) => f.mock.reset()),
  command(commandIds.mockOpenCall, (f, node?: unknown) => f.mock.openCall(node)),
  command(commandIds.mockCallStub, (f, uri?: unknown, index?: unknown) => f.mock.callStub(uri, index)),
  // Load Test… (load/).
  command(commandIds.loadTest, (f, uri?: unknown, index?: unknown, answers?: LoadAnswers) =>
    f.load.start(uri, index, answers),
  ),
];
