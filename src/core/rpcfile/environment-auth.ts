// An environment's `$auth`: the `--auth` value every request sent in that environment uses, unless the
// request says otherwise (its own `# @auth`, an Authorization header, `# @user`, `# @netrc`). So a
// team's protocall.env.json can say once how each environment signs in:
//
//   { "dev": { "$auth": "oauth2 client_credentials issuer=https://id.dev client-id=cli client-secret={{clientSecret}}" } }
//
// with the secret in the git-ignored private file (or `{{$env NAME}}`). `{{...}}` in it resolve as in
// the request; a problem is a diagnostic on the request line, as for the request's own options.
import { parseAuthSpec } from "../auth-spec";
import { errorMessage } from "../errors";
import type { CurlConversion } from "./to-curl";
import type { Diagnostic, RpcRequest } from "./types";
import type { VariableResolver } from "./variables";

/** The environment key that holds the `--auth` value. */
export const environmentAuthKey = "$auth";

/** Sets `conversion.options.auth` from the environment's `$auth` where the request gives no credentials. */
export function applyEnvironmentAuth(
  conversion: CurlConversion,
  request: RpcRequest,
  layers: { selected: Record<string, string>; shared: Record<string, string> },
  variables: VariableResolver,
  environmentName: string | undefined,
): void {
  const text = layers.selected[environmentAuthKey] ?? layers.shared[environmentAuthKey];
  const o = conversion.options;
  if (text === undefined || text === "" || !o) return;
  if (o.auth !== undefined || o.user !== undefined || o.netrc || o.netrcFile !== undefined) return;
  if (o.headers.some((h) => /^\s*authorization\s*:/i.test(h))) return;
  const range = request.requestLine ?? request.range;
  const diagnostics: Diagnostic[] = [];
  const value = variables.resolve({ text, range }, diagnostics);
  const from = `${environmentAuthKey} of environment "${environmentName ?? "$shared"}"`;
  if (diagnostics.length === 0) {
    try {
      parseAuthSpec(value, from);
      o.auth = value;
      return;
    } catch (err) {
      diagnostics.push({ severity: "error", message: errorMessage(err), range, code: "invalid-option" });
    }
  } else {
    for (const d of diagnostics) d.message = `${from}: ${d.message}`;
  }
  conversion.diagnostics.push(...diagnostics);
  conversion.options = undefined;
}
