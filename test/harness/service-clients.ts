// The test stack's internal gRPC contracts, called with the service token as the services call
// each other: what tests inspect that the public API does not show.
import type { DescService } from "@bufbuild/protobuf";
import { QuotaService } from "../../proto/gen/articles/accounts_billing/v1/quota_pb.ts";
import { ArticleLifecycleService, ArticleStoreService } from "../../proto/gen/articles/article_store/v1/articles_pb.ts";
import { ModelCatalogService } from "../../proto/gen/articles/generation_runner/v1/models_pb.ts";
import { GenerationRunService } from "../../proto/gen/articles/generation_runner/v1/runs_pb.ts";
import { WebhookSigningService } from "../../proto/gen/articles/webhook_dispatcher/v1/signing_pb.ts";
import { WorkflowSnapshotService } from "../../proto/gen/articles/workflow_catalog/v1/snapshots_pb.ts";
import { serviceClient } from "../../services/kit/src/clients.ts";
import type { TestStack } from "./stack.ts";

export function stackClient<S extends DescService>(stack: TestStack, service: S, baseUrl: string) {
  return serviceClient(service, { baseUrl, serviceToken: stack.env.SERVICE_TOKEN });
}

export const quotaClient = (stack: TestStack) => stackClient(stack, QuotaService, stack.env.ACCOUNTS_BILLING_URL);
export const storeClient = (stack: TestStack) => stackClient(stack, ArticleStoreService, stack.env.ARTICLE_STORE_URL);
export const lifecycleClient = (stack: TestStack) => stackClient(stack, ArticleLifecycleService, stack.env.ARTICLE_STORE_URL);
export const runClient = (stack: TestStack) => stackClient(stack, GenerationRunService, stack.env.GENERATION_RUNNER_URL);
export const modelCatalogClient = (stack: TestStack) => stackClient(stack, ModelCatalogService, stack.env.GENERATION_RUNNER_URL);
export const signingClient = (stack: TestStack) => stackClient(stack, WebhookSigningService, stack.env.WEBHOOK_DISPATCHER_URL);
/** The catalog's snapshot contract, as article creation and the runner call it. */
export const snapshotClient = (stack: TestStack) => stackClient(stack, WorkflowSnapshotService, stack.env.WORKFLOW_CATALOG_URL);
