// The emulator's configuration: users with their tokens, repositories (modules) with their Admins,
// members and visibility, organizations with their Admins and members, and whether webhooks are
// enabled. Read from a JSON file (see examples/registry/config.json).
import { readFileSync } from "node:fs";
import { errorMessage, ProtocallError } from "../errors";
import { jsonProblemAt } from "../invoke/json-error";

export interface RegistryUser {
  readonly name: string;
  readonly token: string;
}

export interface RegistryRepository {
  readonly owner: string;
  readonly name: string;
  /** Users with the Admin role: they may manage the repository's webhooks. */
  readonly admins: readonly string[];
  /** Users who may push but not manage webhooks. */
  readonly members: readonly string[];
  /** Who may read it through the module API: anyone signed in (public) or its roles only (private). */
  readonly visibility: "public" | "private";
}

/** An organization: its Admins and members hold those roles on every module it owns. */
export interface RegistryOrganization {
  readonly name: string;
  readonly admins: readonly string[];
  readonly members: readonly string[];
}

export interface RegistryConfig {
  readonly users: readonly RegistryUser[];
  readonly repositories: readonly RegistryRepository[];
  readonly organizations: readonly RegistryOrganization[];
  /** Default true. When false, WebhookService refuses every call with failed_precondition. */
  readonly webhooksEnabled: boolean;
}

/** The configuration used when no --config is given: the same as examples/registry/config.json. */
export const defaultRegistryConfig: RegistryConfig = {
  users: [
    { name: "alice", token: "alice-token" },
    { name: "bob", token: "bob-token" },
  ],
  repositories: [
    { owner: "acme", name: "petapis", admins: ["alice"], members: ["bob"], visibility: "private" },
  ],
  organizations: [],
  webhooksEnabled: true,
};

/** Reads and checks a configuration file; every problem names the file and the offending entry. */
export function loadRegistryConfig(file: string): RegistryConfig {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new ProtocallError(`cannot read registry config ${file}: ${errorMessage(err)}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // Not JSON.parse's message: it quotes the text around the problem, which may be a token.
    throw new ProtocallError(
      `registry config ${file} is not valid JSON (${jsonProblemAt(text) ?? "invalid JSON"}); fix the file`,
    );
  }
  return parseRegistryConfig(json, file);
}

export function parseRegistryConfig(json: unknown, where = "registry config"): RegistryConfig {
  const fail = (msg: string): never => {
    throw new ProtocallError(`${where}: ${msg}`);
  };
  const userList = (value: unknown, what: string): string[] => {
    const v = value ?? [];
    if (!Array.isArray(v) || v.some((x) => typeof x !== "string"))
      fail(`${what} must be an array of user names`);
    for (const n of v as string[]) {
      if (!names.has(n)) fail(`${what} names unknown user "${n}"`);
    }
    return v as string[];
  };
  if (!json || typeof json !== "object" || Array.isArray(json)) fail("must be a JSON object");
  const obj = json as Record<string, unknown>;
  const users: RegistryUser[] = [];
  const names = new Set<string>();
  const tokens = new Set<string>();
  if (obj.users !== undefined && !Array.isArray(obj.users)) fail(`"users" must be an array`);
  for (const [i, u] of ((obj.users as unknown[]) ?? []).entries()) {
    const user = u as Record<string, unknown>;
    if (!user || typeof user.name !== "string" || !user.name)
      fail(`users[${i}] needs a non-empty "name" string`);
    if (typeof user.token !== "string" || !user.token)
      fail(`users[${i}] ("${user.name}") needs a non-empty "token" string`);
    if (names.has(user.name as string)) fail(`users[${i}]: the name "${user.name}" appears twice`);
    if (tokens.has(user.token as string)) fail(`users[${i}] ("${user.name}"): two users share a token`);
    names.add(user.name as string);
    tokens.add(user.token as string);
    users.push({ name: user.name as string, token: user.token as string });
  }
  const repositories: RegistryRepository[] = [];
  if (obj.repositories !== undefined && !Array.isArray(obj.repositories))
    fail(`"repositories" must be an array`);
  const seen = new Set<string>();
  for (const [i, r] of ((obj.repositories as unknown[]) ?? []).entries()) {
    const repo = r as Record<string, unknown>;
    if (!repo || typeof repo.owner !== "string" || !repo.owner)
      fail(`repositories[${i}] needs a non-empty "owner" string`);
    if (typeof repo.name !== "string" || !repo.name)
      fail(`repositories[${i}] needs a non-empty "name" string`);
    const full = `${repo.owner}/${repo.name}`;
    if (seen.has(full)) fail(`repositories[${i}]: ${full} appears twice`);
    seen.add(full);
    const list = (key: "admins" | "members") => userList(repo[key], `repositories[${i}] (${full}): "${key}"`);
    if (repo.visibility !== undefined && repo.visibility !== "public" && repo.visibility !== "private")
      fail(`repositories[${i}] (${full}): "visibility" must be "public" or "private"`);
    repositories.push({
      owner: repo.owner as string,
      name: repo.name as string,
      admins: list("admins"),
      members: list("members"),
      visibility: (repo.visibility as "public" | "private" | undefined) ?? "private",
    });
  }
  const organizations: RegistryOrganization[] = [];
  if (obj.organizations !== undefined && !Array.isArray(obj.organizations))
    fail(`"organizations" must be an array`);
  for (const [i, o] of ((obj.organizations as unknown[]) ?? []).entries()) {
    const org = o as Record<string, unknown>;
    if (!org || typeof org.name !== "string" || !org.name)
      fail(`organizations[${i}] needs a non-empty "name" string`);
    if (names.has(org.name as string))
      fail(`organizations[${i}]: "${org.name}" is a user's name; an owner is a user or an organization`);
    if (organizations.some((x) => x.name === org.name))
      fail(`organizations[${i}]: "${org.name}" appears twice`);
    organizations.push({
      name: org.name as string,
      admins: userList(org.admins, `organizations[${i}] (${org.name}): "admins"`),
      members: userList(org.members, `organizations[${i}] (${org.name}): "members"`),
    });
  }
  if (obj.webhooksEnabled !== undefined && typeof obj.webhooksEnabled !== "boolean")
    fail(`"webhooksEnabled" must be true or false`);
  return {
    users,
    repositories,
    organizations,
    webhooksEnabled: (obj.webhooksEnabled as boolean | undefined) ?? true,
  };
}
