// The flags of the servers protocall runs (`listen`, `registry serve`, `mock`, `proxy`): where to
// listen and TLS (a generated self-signed certificate or the user's); for the webhook servers, the
// package prefix of their paths.
import { ProtocallError } from "../../core/errors";
import { configDir, ensureSelfSignedCert } from "../../core/serve/self-signed";
import { defaultPrefix, isValidPrefix } from "../../core/webhooks/paths";
import { defineFlags } from "../args";
import type { CliContext } from "../context";
import { readFlagFile } from "../io";

export const serverFlags = defineFlags({
  host: { kind: "string", value: "HOST", default: "127.0.0.1", help: "address to bind" },
  port: {
    kind: "int",
    value: "PORT",
    min: 0,
    max: 65535,
    default: 0,
    defaultText: "0: any free port",
    help: "port",
  },
  tls: {
    kind: "bool",
    help: "serve https with a self-signed certificate, generated once and kept in $XDG_CONFIG_HOME/protocall (or ~/.config/protocall); its path and SHA-256 fingerprint are printed, and the other protocall commands trust it",
  },
  cert: { kind: "string", value: "FILE", help: "serve https with this certificate (PEM); needs --key" },
  key: { kind: "string", value: "FILE", help: "the private key (PEM) of --cert" },
  prefix: {
    kind: "string",
    value: "NAME",
    default: defaultPrefix,
    help: "package prefix of the webhook services in URL paths",
  },
});

interface ServerFlagValues {
  tls: boolean;
  cert?: string;
  key?: string;
  /** The webhook servers' --prefix (the others have none). */
  prefix?: string;
}

/** Checks the shared flags before anything starts. */
export function checkServerFlags(values: ServerFlagValues): void {
  if (values.tls && (values.cert || values.key))
    throw new ProtocallError("use either --tls or --cert/--key, not both");
  if (Boolean(values.cert) !== Boolean(values.key))
    throw new ProtocallError("--cert and --key must be given together");
  if (values.prefix !== undefined && !isValidPrefix(values.prefix)) {
    throw new ProtocallError(
      `invalid value "${values.prefix}" for --prefix: it must be a package name such as buf or acme.registry`,
    );
  }
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
  if (values.cert && values.key) {
    return { cert: readFlagFile(ctx, values.cert, "--cert"), key: readFlagFile(ctx, values.key, "--key") };
  }
  return undefined;
}
