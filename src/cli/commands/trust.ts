// Whom the CLI's https calls to registries, listeners and the registry emulator trust: the one trust
// rule (src/core/registry/trust.ts, buf's: SSL_CERT_FILE / SSL_CERT_DIR, else the system's roots, plus
// NODE_EXTRA_CA_CERTS), plus the flag's CA file (--cacert, --trust-ca), plus the self-signed
// certificates that `protocall listen --tls` and `protocall registry serve --tls` generated on this
// machine, so calling Protocall's own servers needs no flag. Each of those is self-signed for
// localhost and 127.0.0.1, so it verifies only the server that holds its key. -k turns verification
// off. A certificate failure that remains says which flag fixes it.
import { type RegistryTrustOptions, registryTrust } from "../../core/registry/trust";
import { configDir, generatedCerts } from "../../core/webhooks/self-signed";
import type { CliContext } from "../context";

/** The trust of one https call the CLI makes (http-post's options). */
export interface CliTrust {
  /** The trusted certificates in PEM, exactly; undefined for Node's defaults. */
  readonly trusted?: readonly string[];
  readonly insecure: boolean;
}

/** What the trust rule takes from the command line: the CA file and which servers' certificates. */
export function trustOptions(
  ctx: CliContext,
  caFile: string | undefined,
  o: { flag?: string; servers?: readonly string[] } = {},
): RegistryTrustOptions {
  return {
    env: ctx.env,
    caFile,
    caFlag: o.flag ?? "--cacert",
    cwd: ctx.cwd,
    extraCas: generatedCerts(configDir(ctx.env), o.servers),
  };
}

/** The trust for a call, from its --cacert and -k (when the command has them). */
export function trustFor(ctx: CliContext, values: { cacert?: string; insecure?: boolean }): CliTrust {
  return { trusted: registryTrust(trustOptions(ctx, values.cacert)), insecure: values.insecure === true };
}

/** What to do about a certificate failure, to append to its message; "" for other failures. */
export function certificateAdvice(message: string): string {
  if (!/self[- ]signed|unable to (verify|get (local )?issuer)|certificate/i.test(message)) return "";
  return "; to trust the server's certificate, give its CA (or the certificate itself) with --cacert FILE, or skip verification with -k";
}
