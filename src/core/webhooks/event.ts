// Push events: building the EventRequest the registry sends, and its binary and JSON forms.
import { randomBytes, randomUUID } from "node:crypto";
import { create, fromJson, type JsonValue, toBinary, toJson } from "@bufbuild/protobuf";
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
import { WebhookEvent } from "../../gen/buf/alpha/registry/v1alpha1/webhook_pb";
import { type EventRequest, EventRequestSchema } from "../../gen/buf/alpha/webhook/v1alpha1/event_pb";
import { registry } from "./type-registry";

/** The EventRequest for a push of `commit` to `repository` at `eventTime`. */
export function pushEvent(
  repository: Repository,
  commit: RepositoryCommit,
  eventTime = new Date(),
): EventRequest {
  return create(EventRequestSchema, {
    event: WebhookEvent.REPOSITORY_PUSH,
    payload: {
      payload: {
        case: "repositoryPush",
        value: { eventTime: timestampFromDate(eventTime), repository, repositoryCommit: commit },
      },
    },
  });
}

export interface NewCommitInput {
  readonly author: string;
  readonly tags?: readonly string[];
  readonly sequenceId: bigint;
  readonly time?: Date;
}

/** A new commit as a registry records it: ids, digest, sequence id, create time and tags. */
export function newCommit(input: NewCommitInput): RepositoryCommit {
  const time = timestampFromDate(input.time ?? new Date());
  const id = randomUUID().replaceAll("-", "");
  return create(RepositoryCommitSchema, {
    id,
    name: id,
    createTime: time,
    digest: `shake256:${randomBytes(64).toString("hex")}`,
    branch: "main",
    commitSequenceId: input.sequenceId,
    author: input.author,
    tags: (input.tags ?? []).map((name) =>
      create(RepositoryTagSchema, {
        id: randomUUID().replaceAll("-", ""),
        name,
        commitName: id,
        author: input.author,
        createTime: time,
      }),
    ),
    tagCount: BigInt(input.tags?.length ?? 0),
  });
}

/** A synthetic push (`protocall webhook send-test`): acme/petapis, one commit tagged v1.0.0. */
export function samplePushEvent(now = new Date()): EventRequest {
  const repository = create(RepositorySchema, {
    id: "3c7f3fb5a2b04ad79b58b6f5b2f0a1d4",
    name: "petapis",
    ownerName: "acme",
    owner: { case: "userId", value: "9d2a6c1e0f7b4e3a8c5d1b2a3f4e5d6c" },
    visibility: Visibility.PUBLIC,
    createTime: timestampFromDate(new Date(Date.UTC(2024, 0, 1))),
    updateTime: timestampFromDate(now),
    defaultBranch: "main",
  });
  return pushEvent(
    repository,
    newCommit({ author: "alice", tags: ["v1.0.0"], sequenceId: 1n, time: now }),
    now,
  );
}

export function encodeEvent(event: EventRequest): Uint8Array {
  return toBinary(EventRequestSchema, event);
}
export function eventToJson(event: EventRequest): JsonValue {
  return toJson(EventRequestSchema, event, { registry });
}

export function eventFromJson(json: JsonValue): EventRequest {
  return fromJson(EventRequestSchema, json, { registry });
}
