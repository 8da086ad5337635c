// "Add Registry Module…" of the Services view: asks for a registry (those the editor is signed in to
// for the Webhooks view first, then any other `host[:port]`) and a module (`owner/module[:ref]`), and
// adds `REMOTE/owner/module[:ref]` to the `protocall.schemas` setting. The language server then opens
// it like any schema (fetched as buf fetches it, verified, cached by commit), with the signed-in
// registry's token.
import * as vscode from "vscode";
import { moduleRefProblem } from "../../core/schema/module-ref";
import type { ProtocallContext } from "../context";

/** Asks for a module (unless `given`) and adds it to the settings; returns what was added. */
export async function addRegistryModule(ctx: ProtocallContext, given?: unknown): Promise<string | undefined> {
  const spec = typeof given === "string" ? given.trim() : await askModule(ctx);
  if (!spec) return undefined;
  const problem = moduleRefProblem(spec);
  if (problem) {
    void vscode.window.showErrorMessage(problem);
    return undefined;
  }
  await ctx.settings.addSchema(spec);
  return spec;
}

async function askModule(ctx: ProtocallContext): Promise<string | undefined> {
  const signedIn = await ctx.signedInRegistries().catch(() => []);
  const other = { label: "$(add) Other registry…", remote: "" };
  const items = [
    ...signedIn.map((r) => ({ label: r.remote, description: `${r.name} · signed in`, remote: r.remote })),
    other,
  ];
  const picked =
    signedIn.length === 0
      ? other
      : await vscode.window.showQuickPick(items, {
          title: "Add Registry Module: registry",
          ignoreFocusOut: true,
        });
  if (!picked) return undefined;
  const remote =
    picked.remote ||
    (await vscode.window.showInputBox({
      title: "Add Registry Module: registry",
      prompt: "The registry's host name, with its port when it is not 443",
      placeHolder: "buf.example.com",
      ignoreFocusOut: true,
      validateInput: (v) => (v.trim() ? moduleRefProblem(`${v.trim()}/owner/module`) : "Enter a host name"),
    }));
  if (!remote) return undefined;
  const module = await vscode.window.showInputBox({
    title: `Add Registry Module: module on ${remote}`,
    prompt: "owner/module, optionally followed by :label or :commit",
    placeHolder: "acme/weather:main",
    ignoreFocusOut: true,
    validateInput: (v) => moduleRefProblem(`${remote.trim()}/${v.trim()}`),
  });
  return module ? `${remote.trim()}/${module.trim()}` : undefined;
}
