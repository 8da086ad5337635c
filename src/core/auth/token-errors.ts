// The one place OAuth2 failures become error texts: a provider's error response is shown as it sent
// it (`invalid_client: client authentication failed`), with the endpoint that sent it; a network or
// TLS failure names the endpoint and the cause; nothing shows a secret (the redactor knows them).

import type { AuthSpec } from "../auth-spec";
import { ProtocallError } from "../errors";
import { redactSecrets } from "../invoke/redact";

type Configuration = import("openid-client").Configuration;

/** The ProtocallError for a failure of `step` (discovery, the token endpoint, device authorization). */
export async function tokenError(
  err: unknown,
  step: string,
  spec: AuthSpec,
  config?: Configuration,
): Promise<ProtocallError> {
  if (err instanceof ProtocallError) return err;
  const where = endpoint(step, spec, config);
  // An error response openid-client did not parse as one (a 401 with a challenge, an unexpected
  // status): its body, or the challenge, says what the server meant.
  const response = responseOf(err);
  const e =
    (response ? await errorBody(response) : undefined) ??
    challengeError(err) ??
    (err as { error?: unknown; error_description?: unknown });
  if (typeof e.error === "string") {
    const description =
      typeof e.error_description === "string" && e.error_description ? `: ${e.error_description}` : "";
    return new ProtocallError(redactSecrets(`OAuth2 ${where}: ${e.error}${description}`), 1, { cause: err });
  }
  if (response) {
    const text = (await response.text().catch(() => "")).trim().replace(/\s+/g, " ").slice(0, 200);
    return new ProtocallError(
      redactSecrets(`OAuth2 ${where}: HTTP ${response.status}${text ? `: ${text}` : ""}`),
      1,
      {
        cause: err,
      },
    );
  }
  if ((err as Error)?.name === "AbortError") return new ProtocallError(`OAuth2 ${where}: canceled`, 1);
  const message = causeChain(err);
  const advice =
    step === "discovery" ? "; check issuer= (it must serve /.well-known/openid-configuration)" : "";
  return new ProtocallError(redactSecrets(`OAuth2 ${where}: ${message}${advice}`), 1, { cause: err });
}

function responseOf(err: unknown): Response | undefined {
  const e = err as { response?: unknown; cause?: unknown };
  const isResponse = (r: unknown): r is Response =>
    typeof (r as Response | undefined)?.clone === "function" && typeof (r as Response).status === "number";
  if (isResponse(e?.response)) return e.response;
  if (isResponse(e?.cause)) return e.cause;
  return undefined;
}

/** The error of a 401's `WWW-Authenticate` challenge (what openid-client parsed from it). */
function challengeError(err: unknown): { error?: unknown; error_description?: unknown } | undefined {
  const challenges = (err as { cause?: unknown }).cause;
  if (!Array.isArray(challenges)) return undefined;
  for (const c of challenges as { parameters?: { error?: unknown; error_description?: unknown } }[]) {
    if (typeof c?.parameters?.error === "string") return c.parameters;
  }
  return undefined;
}

async function errorBody(r: Response): Promise<{ error?: unknown; error_description?: unknown } | undefined> {
  try {
    const body = (await r.clone().json()) as { error?: unknown; error_description?: unknown };
    return body && typeof body === "object" && typeof body.error === "string" ? body : undefined;
  } catch {
    return undefined;
  }
}

function endpoint(step: string, spec: AuthSpec, config?: Configuration): string {
  const meta = config?.serverMetadata();
  if (step === "discovery") return `discovery at ${spec.issuer}`;
  if (step === "device authorization") {
    return `device authorization at ${meta?.device_authorization_endpoint ?? spec.deviceAuthorizationUrl ?? spec.issuer}`;
  }
  return `token endpoint ${meta?.token_endpoint ?? spec.tokenUrl ?? spec.issuer}`;
}

/** The messages of an error and its causes, `a: b`, each once. */
function causeChain(err: unknown): string {
  const parts: string[] = [];
  let e: unknown = err;
  for (let i = 0; e && i < 5; i++) {
    const m = e instanceof Error ? e.message : typeof e === "string" ? e : "";
    if (m && !parts.some((p) => p.includes(m))) parts.push(m);
    e = e instanceof Error ? e.cause : undefined;
  }
  return parts.join(": ") || String(err);
}
