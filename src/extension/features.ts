// The extension's features, one module each, all created by activate() from the one context. The
// command table (command-table.ts) maps each command id to a method of one of them; activate()
// returns their APIs.
import { AgentToolsFeature } from "./agent-tools/agent-tools-feature";
import type { ProtocallContext } from "./context";
import { DeliveriesFeature } from "./deliveries/deliveries-feature";
import { LiveFeature } from "./live/live-feature";
import { LoadFeature } from "./load/load-feature";
import { MockFeature } from "./mock/mock-feature";
import { RequestFilesFeature } from "./request-files/request-files-feature";
import { SendFeature } from "./send/send-feature";
import { ServicesFeature } from "./services/services-feature";
import { closeStalePanels } from "./stale-panels";
import { TestsFeature } from "./test-explorer/tests-feature";
import { TrafficFeature } from "./traffic/traffic-feature";
import { WebhooksFeature } from "./webhooks/webhooks-feature";

export interface Features {
  readonly ctx: ProtocallContext;
  readonly send: SendFeature;
  readonly requestFiles: RequestFilesFeature;
  readonly services: ServicesFeature;
  readonly webhooks: WebhooksFeature;
  readonly deliveries: DeliveriesFeature;
  readonly tests: TestsFeature;
  readonly live: LiveFeature;
  readonly traffic: TrafficFeature;
  readonly mock: MockFeature;
  readonly agentTools: AgentToolsFeature;
  readonly load: LoadFeature;
}

export function createFeatures(ctx: ProtocallContext): Features {
  closeStalePanels(ctx.subscriptions);
  const send = new SendFeature(ctx);
  return {
    ctx,
    send,
    requestFiles: new RequestFilesFeature(ctx),
    services: new ServicesFeature(ctx),
    webhooks: new WebhooksFeature(ctx),
    deliveries: new DeliveriesFeature(ctx),
    tests: new TestsFeature(ctx, send),
    live: new LiveFeature(ctx, send),
    traffic: new TrafficFeature(ctx),
    mock: new MockFeature(ctx, send),
    agentTools: new AgentToolsFeature(ctx, send.engine),
    load: new LoadFeature(ctx, send),
  };
}
