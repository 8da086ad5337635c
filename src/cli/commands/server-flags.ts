// The flags that `protocall listen` and `protocall registry serve` share: where to listen, the
// package prefix of the webhook paths, and TLS (a generated self-signed certificate or the user's).
import { ProtocallError } from "../../core/errors";
import { defaultPrefix, isValidPrefix } from "../../core/webhooks/paths";
import { configDir, ensureSelfSignedCert } from "../../core/webhooks/self-signed";
import type { CliContext } from "../context";
import { readText } from "./webhook";

export interface ServerFlagValues {
  port?: unknown;
  prefix?: unknown;
  tls?: unknown;
  cert?: unknown;
  key?: unknown;
}

/** Checks the shared flags before anything starts; returns the port and the package prefix. */
export function checkServerFlags(values: ServerFlagValues): { port: number; prefix: string } {
  if (values.tls && (values.cert || values.key))
    throw new ProtocallError("use either --tls or --cert/--key, not both");
  if (Boolean(values.cert) !== Boolean(values.key))
    throw new ProtocallError("--cert and --key must be given together");
  const port = values.port === undefined ? 0 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new ProtocallError(`--port "${values.port}" is not a port number`);
  const prefix = (values.prefix as string | undefined) ?? defaultPrefix;
  if (!isValidPrefix(prefix)) throw new ProtocallError(`--prefix "${prefix}" is not a valid package name`);
  return { port, prefix };
}

/**
 * The certificate to serve: with --tls a self-signed one named `name`, generated once in the config
 * directory and reused (its path and SHA-256 fingerprint are printed); with --cert/--key the user's.
 */
export async function serverTls(
  values: ServerFlagValues,
  ctx: CliContext,
  name?: string,
): Promise<{ cert: string; key: string } | undefined> {
  if (values.tls) {
    const generated = await ensureSelfSignedCert(configDir(ctx.env), name);
    ctx.stderr.write(
      `${generated.created ? "generated" : "using"} self-signed certificate ${generated.certPath}\nSHA-256 fingerprint ${generated.fingerprint}\n`,
    );
    return { cert: generated.cert, key: generated.key };
  }
  if (values.cert) {
    return { cert: readText(values.cert as string, "--cert"), key: readText(values.key as string, "--key") };
  }
  return undefined;
}
