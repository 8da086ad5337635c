// A repository as the user names it in the Webhooks view: `owner/repository`.

export interface RepositoryName {
  readonly owner: string;
  readonly repository: string;
}

/** Why `text` is not `owner/repository`, or undefined when it is. */
export function repositoryNameProblem(text: string): string | undefined {
  const trimmed = text.trim();
  if (trimmed === "") return "give the repository as owner/repository, e.g. acme/petapis";
  const parts = trimmed.split("/");
  if (parts.length !== 2) {
    return `"${trimmed}" must be owner/repository with one "/", e.g. acme/petapis`;
  }
  const [owner, repository] = parts.map((p) => p.trim());
  if (!owner) return `"${trimmed}" has no owner before the "/": write owner/repository`;
  if (!repository) return `"${trimmed}" has no repository name after the "/": write owner/repository`;
  return undefined;
}

/** Splits `owner/repository`; undefined when `text` is not one (see repositoryNameProblem). */
export function parseRepositoryName(text: string): RepositoryName | undefined {
  if (repositoryNameProblem(text) !== undefined) return undefined;
  const [owner, repository] = text
    .trim()
    .split("/")
    .map((p) => p.trim());
  return { owner, repository };
}
