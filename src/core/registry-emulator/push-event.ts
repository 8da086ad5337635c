// The repository-push event of a push through the module API: a module commit (buf.registry.module.v1)
// mapped onto the alpha webhook event (buf.alpha.registry.v1alpha1.RepositoryCommit and Repository),
// which is what webhooks receive. The mapping, field by field (also in the README):
//   RepositoryCommit.id, .name         the commit id (dashless)
//   .create_time                       the commit's create time
//   .digest, .b5_digest                "b5:<hex>" of the commit
//   .manifest_digest                   "shake256:<hex>" of the manifest of the module files
//   .author                            the user who pushed
//   .tags                              the labels this push moved to the commit (id, name, commit, author, time)
//   .tag_count                         their number
//   .branch                            the module's default label, when this push moved it; else empty
//   .commit_sequence_id                the commit's position in the module's history (1 for the first)
//   Repository                         the module: id, name, owner name and id (user or organization),
//                                      visibility, create/update time, default_branch = default label
//   RepositoryPushEvent.event_time     when the push was committed
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  type RepositoryCommit,
  RepositoryCommitSchema,
} from "../../gen/buf/alpha/registry/v1alpha1/repository_commit_pb";
import {
  type Repository,
  RepositorySchema,
  Visibility,
} from "../../gen/buf/alpha/registry/v1alpha1/repository_pb";
import { RepositoryTagSchema } from "../../gen/buf/alpha/registry/v1alpha1/repository_tag_pb";
import { filesDigest, formatB5 } from "../registry/b5-digest";
import type { OwnerInfo } from "./access";
import type { CommitData, LabelData, ModuleData } from "./state";

/** The alpha Repository of a module. */
export function toRepository(module: ModuleData, owner: OwnerInfo | undefined): Repository {
  return create(RepositorySchema, {
    id: module.id,
    name: module.name,
    ownerName: module.owner,
    owner: { case: owner?.kind === "user" ? "userId" : "organizationId", value: module.ownerId },
    visibility: module.visibility === "public" ? Visibility.PUBLIC : Visibility.PRIVATE,
    deprecated: module.state === "deprecated",
    description: module.description,
    url: module.url,
    createTime: timestampFromDate(new Date(module.createTime)),
    updateTime: timestampFromDate(new Date(module.updateTime)),
    defaultBranch: module.defaultLabel,
  });
}

/** The alpha RepositoryCommit of a module commit, with the labels the push moved to it. */
export function toRepositoryCommit(
  module: ModuleData,
  commit: CommitData,
  labels: readonly LabelData[],
  sequenceId: number,
): RepositoryCommit {
  const b5 = formatB5(commit.digest);
  return create(RepositoryCommitSchema, {
    id: commit.id,
    name: commit.id,
    createTime: timestampFromDate(new Date(commit.createTime)),
    digest: b5,
    b5Digest: b5,
    manifestDigest: `shake256:${Buffer.from(filesDigest(commit.files)).toString("hex")}`,
    author: commit.createdBy,
    branch: labels.some((l) => l.name === module.defaultLabel) ? module.defaultLabel : "",
    commitSequenceId: BigInt(sequenceId),
    tags: labels.map((l) =>
      create(RepositoryTagSchema, {
        id: l.id,
        name: l.name,
        commitName: commit.id,
        author: l.updatedBy,
        createTime: timestampFromDate(new Date(l.updateTime)),
      }),
    ),
    tagCount: BigInt(labels.length),
  });
}
