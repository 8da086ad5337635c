// The local registry the editor starts for offline work: the registry emulator on 127.0.0.1 over https
// (a self-signed certificate kept in the given directory, which the editor's client trusts), with the
// built-in configuration unless one is given, signed in as the first user with the Admin role, and
// trusting the local listener's certificate so deliveries to it over https are verified.
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { type PushResponse, RegistryService } from "../../gen/protocall/registry/v1/registry_pb";
import { errorMessage, ProtocallError } from "../errors";
import { remoteAccess } from "../registry/access";
import { registryTransport } from "../registry/transport";
import { defaultRegistryConfig, type RegistryConfig, type RegistryUser } from "./emulator/config";
import { startRegistryEmulator } from "./emulator/server";
import { ensureSelfSignedCert } from "./self-signed";

export interface LocalRegistryOptions {
  /** Where the registry's self-signed certificate is generated once and kept. */
  readonly certDir: string;
  /** Users, repositories and roles (default: the built-in configuration). */
  readonly config?: RegistryConfig;
  /** PEM trusted for callback URLs in addition to the system roots (the listener's certificate). */
  readonly trustCa?: string;
  /** Time between delivery batches (default 5 s, as the registry). */
  readonly batchIntervalMs?: number;
  readonly log?: (line: string) => void;
}

export interface LocalRegistry {
  /** Base URL, e.g. `https://127.0.0.1:41234`. */
  readonly url: string;
  /** The user it is signed in as, and that user's token. */
  readonly user: RegistryUser;
  readonly token: string;
  /** The PEM certificate it serves (to trust when calling it). */
  readonly ca: string;
  /** `owner/name` of the repositories the user administers. */
  readonly repositories: readonly string[];
  readonly config: RegistryConfig;
  close(): Promise<void>;
}

/** The first user with the Admin role on some repository (the one the editor signs in as). */
export function adminUserOf(config: RegistryConfig): RegistryUser {
  for (const user of config.users) {
    if (config.repositories.some((r) => r.admins.includes(user.name))) return user;
  }
  throw new ProtocallError(
    'the registry configuration has no user with the Admin role: add a user name to a repository\'s "admins"',
  );
}

export async function startLocalRegistry(options: LocalRegistryOptions): Promise<LocalRegistry> {
  const config = options.config ?? defaultRegistryConfig;
  const user = adminUserOf(config);
  const cert = await ensureSelfSignedCert(options.certDir, "registry");
  let emulator: Awaited<ReturnType<typeof startRegistryEmulator>>;
  try {
    emulator = await startRegistryEmulator({
      config,
      host: "127.0.0.1",
      port: 0,
      tls: { cert: cert.cert, key: cert.key },
      trustCa: options.trustCa,
      untrustedCertificateHint:
        "the callback URL's certificate is not trusted; the local registry trusts the system roots and the local listener's certificate, so use the local listener's callback URL",
      batchIntervalMs: options.batchIntervalMs,
      log: options.log,
    });
  } catch (err) {
    throw new ProtocallError(`cannot start the local registry: ${errorMessage(err)}`);
  }
  // The emulator names its address by IP; the certificate covers 127.0.0.1, so it verifies.
  return {
    url: emulator.url,
    user,
    token: user.token,
    ca: cert.cert,
    repositories: config.repositories
      .filter((r) => r.admins.includes(user.name))
      .map((r) => `${r.owner}/${r.name}`),
    config,
    close: () => emulator.close(),
  };
}

export interface PushInput {
  readonly owner: string;
  readonly repository: string;
  /** The commit's author (default: the signed-in user). */
  readonly author?: string;
  readonly tags?: readonly string[];
}

/**
 * Records a commit in a repository of a registry emulator (its Push RPC, as `protocall registry push`),
 * which queues a push event for the repository's webhook. Failures are ProtocallErrors saying what to do.
 */
export async function pushToRegistry(
  baseUrl: string,
  token: string,
  input: PushInput,
  options: { ca?: string; timeoutMs?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<PushResponse> {
  // The one registry client: the editor's token, its CA for the registry, and the trust rule.
  const remote = new URL(baseUrl).host;
  const access = remoteAccess(remote, {
    env: options.env ?? process.env,
    tokens: { [remote]: token },
    cas: options.ca ? { [remote]: options.ca } : undefined,
    secure: baseUrl.startsWith("https:"),
  });
  const client = createClient(RegistryService, registryTransport(access, { baseUrl, binary: false }));
  try {
    return await client.push(
      {
        ownerName: input.owner,
        repositoryName: input.repository,
        author: input.author ?? "",
        tags: [...(input.tags ?? [])],
      },
      { timeoutMs: options.timeoutMs ?? 30_000 },
    );
  } catch (err) {
    const e = ConnectError.from(err);
    const repo = `${input.owner}/${input.repository}`;
    switch (e.code) {
      case Code.Unavailable:
        throw new ProtocallError(
          `cannot reach the local registry at ${baseUrl}: ${e.rawMessage}; start it again (Start Local Registry)`,
        );
      case Code.Unauthenticated:
        throw new ProtocallError(
          `the local registry did not accept the token (${e.rawMessage}): sign in again`,
        );
      case Code.NotFound:
        throw new ProtocallError(
          `cannot push to ${repo}: ${e.rawMessage}; push to a repository of the registry's configuration`,
        );
      default:
        throw new ProtocallError(`cannot push to ${repo}: ${e.rawMessage}`);
    }
  }
}
