import assert from "node:assert/strict";
import { test } from "node:test";
import { parseRepositoryName, repositoryNameProblem } from "../../../src/core/webhooks/repository-name";

test("owner/repository is split, with spaces around the parts trimmed", () => {
  assert.deepEqual(parseRepositoryName(" acme/petapis "), { owner: "acme", repository: "petapis" });
  // Names are shown as plain text, never interpreted: markup-looking names pass through unchanged.
  assert.deepEqual(parseRepositoryName("acme/<img src=x onerror=alert(1)>"), {
    owner: "acme",
    repository: "<img src=x onerror=alert(1)>",
  });
});

test("each malformed name says what is missing", () => {
  assert.match(repositoryNameProblem("")!, /owner\/repository, e\.g\. acme\/petapis/);
  assert.match(repositoryNameProblem("petapis")!, /one "\/"/);
  assert.match(repositoryNameProblem("a/b/c")!, /one "\/"/);
  assert.match(repositoryNameProblem("/petapis")!, /no owner/);
  assert.match(repositoryNameProblem("acme/ ")!, /no repository name/);
  assert.equal(parseRepositoryName("acme"), undefined);
});
