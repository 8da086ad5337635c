// The access a test client has to a registry at `baseUrl`: the token as the editor holds one, and the
// registry's CA trusted besides the system's roots, through the one registry access module.
import { type RemoteAccess, remoteAccess } from "../../src/core/registry/access";

export function accessFor(baseUrl: string, token: string, ca?: string): RemoteAccess {
  const remote = new URL(baseUrl).host;
  return remoteAccess(remote, {
    env: {},
    tokens: { [remote]: token },
    cas: ca ? { [remote]: ca } : undefined,
  });
}
