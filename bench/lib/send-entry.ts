// Bundled by bench/send.bench.mjs: the editor's send path and a bare Connect client, side by side.

export { createClient } from "@connectrpc/connect";
export { createConnectTransport } from "@connectrpc/connect-node";
export { createCallSession } from "../../src/core/invoke/call-session";
export { defaultCurlOptions } from "../../src/core/invoke/options";
export { redactSecrets } from "../../src/core/invoke/redact";
export { prepareSend } from "../../src/core/rpcfile/prepare-send";
export { GreetService } from "../../src/gen/demo/v1/greet_pb";
