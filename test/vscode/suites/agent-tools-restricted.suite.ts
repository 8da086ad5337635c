// In an untrusted workspace (Restricted Mode) Protocall's language-model tools are not offered to
// agents, and a call that still reaches one is refused with how to allow it: an agent cannot send
// requests where Send itself asks the user first.
import assert from "node:assert/strict";
import * as vscode from "vscode";
import type { VscodeTest } from "../harness";

/** This suite runs in a code-server whose workspace is not trusted. */
export const workspaceTrust = false;

export const tests: VscodeTest[] = [
  {
    name: "the tools are not listed, and invoking one is refused",
    timeoutMs: 60_000,
    async run(env) {
      assert.equal(vscode.workspace.isTrusted, false);
      await vscode.extensions.getExtension("protocall.protocall")?.activate();
      assert.deepEqual(
        vscode.lm.tools.filter((t) => t.name.startsWith("protocall_")).map((t) => t.name),
        [],
      );
      let message = "";
      try {
        await vscode.lm.invokeTool("protocall_call_method", {
          input: { url: `${env.demoUrl}/demo.v1.GreetService/Greet`, request: { name: "x" } },
          toolInvocationToken: undefined,
        });
      } catch (err) {
        message = err instanceof Error ? err.message : String(err);
      }
      assert.match(message, /do not run in Restricted Mode: trust the workspace/);
    },
  },
];
