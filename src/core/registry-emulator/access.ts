// Who is who in the emulator, and who may do what: users by token, owners (users and organizations)
// by name and id, and each user's role on a module. Roles come from the configuration (a repository's
// Admins and members, an organization's Admins and members) and from the state (the user who created a
// module through the module API is its Admin). One set of rules for the webhook API and the module API.
//
//   read a module      public: any signed-in user; private: any role on it
//   push               member or Admin
//   manage webhooks    Admin
//   create a module    under the user's own name; under an organization, its Admins and members (an
//                      owner with no `organizations` entry: the Admins of its configured repositories)
import type { RegistryConfig, RegistryOrganization, RegistryRepository, RegistryUser } from "./config";
import { type ModuleData, ownerIdFor, type RegistryState } from "./state";

export type Role = "admin" | "member";

export interface OwnerInfo {
  readonly id: string;
  readonly name: string;
  readonly kind: "user" | "organization";
}

export class Access {
  private readonly byToken: Map<string, RegistryUser>;
  private readonly byName: Map<string, RegistryUser>;
  private readonly repositories: Map<string, RegistryRepository>;
  private readonly organizations: Map<string, RegistryOrganization>;

  constructor(
    readonly config: RegistryConfig,
    private readonly state: RegistryState,
  ) {
    this.byToken = new Map(config.users.map((u) => [u.token, u]));
    this.byName = new Map(config.users.map((u) => [u.name, u]));
    this.repositories = new Map(config.repositories.map((r) => [`${r.owner}/${r.name}`, r]));
    this.organizations = new Map(config.organizations.map((o) => [o.name, o]));
  }

  userByToken(token: string): RegistryUser | undefined {
    return this.byToken.get(token);
  }

  /** The user whose id (an owner id) is `id`. */
  userById(id: string): RegistryUser | undefined {
    return this.config.users.find((u) => ownerIdFor(u.name) === id);
  }

  /** An owner by name: a configured user, a configured organization, or the owner of some module. */
  owner(name: string): OwnerInfo | undefined {
    if (this.byName.has(name)) return { id: ownerIdFor(name), name, kind: "user" };
    if (this.organizations.has(name) || this.ownsModules(name)) {
      return { id: ownerIdFor(name), name, kind: "organization" };
    }
    return undefined;
  }

  ownerById(id: string): OwnerInfo | undefined {
    for (const u of this.config.users) if (ownerIdFor(u.name) === id) return this.owner(u.name);
    for (const o of this.config.organizations) if (ownerIdFor(o.name) === id) return this.owner(o.name);
    for (const m of this.state.modules()) if (m.ownerId === id) return this.owner(m.owner);
    return undefined;
  }

  private ownsModules(name: string): boolean {
    for (const r of this.config.repositories) if (r.owner === name) return true;
    for (const m of this.state.modules()) if (m.owner === name) return true;
    return false;
  }

  /** The configured repository entry of a module, if it has one. */
  configured(owner: string, name: string): RegistryRepository | undefined {
    return this.repositories.get(`${owner}/${name}`);
  }

  /** The user's role on a module (the higher one when several rules give one). */
  roleOn(user: RegistryUser, module: ModuleData): Role | undefined {
    const repo = this.configured(module.owner, module.name);
    const org = this.organizations.get(module.owner);
    if (
      module.owner === user.name ||
      module.createdBy === user.name ||
      repo?.admins.includes(user.name) ||
      org?.admins.includes(user.name)
    ) {
      return "admin";
    }
    if (repo?.members.includes(user.name) || org?.members.includes(user.name)) return "member";
    return undefined;
  }

  canRead(user: RegistryUser, module: ModuleData): boolean {
    return module.visibility === "public" || this.roleOn(user, module) !== undefined;
  }

  /** Whether the user may create modules under `owner`; an explanation when not. */
  createRefusal(user: RegistryUser, owner: string): string | undefined {
    if (owner === user.name) return undefined;
    if (this.byName.has(owner)) {
      return `user ${user.name} cannot create modules under user ${owner}: only ${owner} can`;
    }
    const org = this.organizations.get(owner);
    if (org) {
      if (org.admins.includes(user.name) || org.members.includes(user.name)) return undefined;
      return `user ${user.name} is not a member of organization ${owner}: add "${user.name}" to its "members" in the registry config`;
    }
    if (this.config.repositories.some((r) => r.owner === owner && r.admins.includes(user.name))) {
      return undefined;
    }
    return `user ${user.name} cannot create modules under ${owner}: add an "organizations" entry for ${owner} with "${user.name}" among its "admins" or "members" in the registry config`;
  }
}
