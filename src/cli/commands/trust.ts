// Whom the CLI's https calls to registries, listeners and the registry emulator trust: the system's
// roots, plus --cacert, plus the self-signed certificates that `protocall listen --tls` and
// `protocall registry serve --tls` generated on this machine, so calling Protocall's own servers
// needs no flag. Each of those is self-signed for localhost and 127.0.0.1, so it verifies only the
// server that holds its key. -k turns verification off. A certificate failure that remains says which
// flag fixes it.
import { configDir, generatedCerts } from "../../core/webhooks/self-signed";
import type { CliContext } from "../context";
import { readFlagFile } from "../io";

export interface TrustOptions {
  /** PEM of the certificates trusted besides the system's roots; undefined when there are none. */
  readonly ca?: string;
  readonly insecure: boolean;
}

/** The trust for a call, from its --cacert and -k (when the command has them). */
export function trustFor(ctx: CliContext, values: { cacert?: string; insecure?: boolean }): TrustOptions {
  const pems = values.cacert ? [readFlagFile(ctx, values.cacert, "--cacert")] : [];
  pems.push(...generatedCerts(configDir(ctx.env)));
  return { ca: pems.length > 0 ? pems.join("\n") : undefined, insecure: values.insecure === true };
}

/** What to do about a certificate failure, to append to its message; "" for other failures. */
export function certificateAdvice(message: string): string {
  if (!/self[- ]signed|unable to (verify|get (local )?issuer)|certificate/i.test(message)) return "";
  return "; to trust the server's certificate, give its CA (or the certificate itself) with --cacert FILE, or skip verification with -k";
}
