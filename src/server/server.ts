// Entry point of the .rpc language server (dist/server.js): `node dist/server.js --stdio`, or the
// other transports vscode-languageserver accepts (--node-ipc, --socket=<port>, --pipe=<name>).
import { createConnection, ProposedFeatures } from "vscode-languageserver/node";
import { errorMessage } from "../core/errors";
import { startLanguageServer } from "./language-server";

const connection = createConnection(ProposedFeatures.all);
// A failure in one request must not take the server (and every open editor) down.
process.on("uncaughtException", (err) => connection.console.error(`unexpected error: ${errorMessage(err)}`));
process.on("unhandledRejection", (err) => connection.console.error(`unexpected error: ${errorMessage(err)}`));
startLanguageServer(connection);
