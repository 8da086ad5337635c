// The message types of the webhook features, for `protocall convert` and JSON of Any fields.
import { createRegistry } from "@bufbuild/protobuf";
import { file_buf_alpha_registry_v1alpha1_repository_commit } from "../../gen/buf/alpha/registry/v1alpha1/repository_commit_pb";
import { file_buf_alpha_registry_v1alpha1_repository } from "../../gen/buf/alpha/registry/v1alpha1/repository_pb";
import { file_buf_alpha_registry_v1alpha1_repository_tag } from "../../gen/buf/alpha/registry/v1alpha1/repository_tag_pb";
import { file_buf_alpha_registry_v1alpha1_webhook } from "../../gen/buf/alpha/registry/v1alpha1/webhook_pb";
import { file_buf_alpha_webhook_v1alpha1_event } from "../../gen/buf/alpha/webhook/v1alpha1/event_pb";
import { file_protocall_registry_v1_registry } from "../../gen/protocall/registry/v1/registry_pb";

export const registry = createRegistry(
  file_buf_alpha_webhook_v1alpha1_event,
  file_buf_alpha_registry_v1alpha1_webhook,
  file_buf_alpha_registry_v1alpha1_repository,
  file_buf_alpha_registry_v1alpha1_repository_commit,
  file_buf_alpha_registry_v1alpha1_repository_tag,
  file_protocall_registry_v1_registry,
);
