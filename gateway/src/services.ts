// The gateway's generated gRPC clients. It reaches services only through these.
import type { Client } from "@connectrpc/connect";
import { AccountsService } from "../../proto/gen/articles/accounts_billing/v1/accounts_pb.ts";
import { QuotaService } from "../../proto/gen/articles/accounts_billing/v1/quota_pb.ts";
import { SessionService, TenantAdminService } from "../../proto/gen/articles/accounts_billing/v1/self_service_pb.ts";
import { ArticleLifecycleService, ArticleStoreService } from "../../proto/gen/articles/article_store/v1/articles_pb.ts";
import { ArticleVersionService } from "../../proto/gen/articles/article_store/v1/versions_pb.ts";
import { WorkflowSnapshotService } from "../../proto/gen/articles/workflow_catalog/v1/snapshots_pb.ts";
import { ModelCatalogService } from "../../proto/gen/articles/generation_runner/v1/models_pb.ts";
import { ArticleImageService } from "../../proto/gen/articles/generation_runner/v1/images_pb.ts";
import { ArticleRetryService } from "../../proto/gen/articles/article_store/v1/retry_pb.ts";
import { ArticleRevisionService } from "../../proto/gen/articles/article_store/v1/revisions_pb.ts";
import { ReservationRetryService } from "../../proto/gen/articles/accounts_billing/v1/retries_pb.ts";
import { ArticleErasureService } from "../../proto/gen/articles/article_store/v1/erasure_pb.ts";
import { RunErasureService } from "../../proto/gen/articles/generation_runner/v1/erasure_pb.ts";
import { DeliveryErasureService } from "../../proto/gen/articles/webhook_dispatcher/v1/erasure_pb.ts";
import { ReservationErasureService } from "../../proto/gen/articles/accounts_billing/v1/erasure_pb.ts";
import { OriginalityCheckService } from "../../proto/gen/articles/generation_runner/v1/originality_pb.ts";
import { CostBreakdownService } from "../../proto/gen/articles/generation_runner/v1/cost_breakdown_pb.ts";
import { WorkflowCatalogService } from "../../proto/gen/articles/workflow_catalog/v1/workflows_pb.ts";
import { PublishingService } from "../../proto/gen/articles/webhook_dispatcher/v1/publishing_pb.ts";
import { WebhookEndpointService } from "../../proto/gen/articles/webhook_dispatcher/v1/endpoints_pb.ts";
import { serviceClient } from "../../services/kit/src/clients.ts";
import type { Credential } from "../../services/kit/src/workload-identity.ts";
import type { GatewayConfig } from "./config.ts";

export interface ServiceClients {
  accounts: Client<typeof AccountsService>;
  quota: Client<typeof QuotaService>;
  /** The dashboard's sign-in and sessions. */
  sessions: Client<typeof SessionService>;
  /** What members manage from the dashboard: keys, members, the selected account. */
  tenantAdmin: Client<typeof TenantAdminService>;
  articles: Client<typeof ArticleStoreService>;
  /** Only for the client's cancel of an article. */
  lifecycle: Client<typeof ArticleLifecycleService>;
  /** An article's version history, its edits and restores. */
  versions: Client<typeof ArticleVersionService>;
  snapshots: Client<typeof WorkflowSnapshotService>;
  models: Client<typeof ModelCatalogService>;
  workflows: Client<typeof WorkflowCatalogService>;
  images: Client<typeof ArticleImageService>;
  costs: Client<typeof CostBreakdownService>;
  /** An article's erasure, service by service (DELETE /v1/articles/{id}). */
  erasure: Client<typeof ArticleErasureService>;
  runErasure: Client<typeof RunErasureService>;
  deliveryErasure: Client<typeof DeliveryErasureService>;
  reservationErasure: Client<typeof ReservationErasureService>;
  /** A failed article's retry (POST /v1/articles/{id}/retry). */
  retries: Client<typeof ArticleRetryService>;
  revisions: Client<typeof ArticleRevisionService>;
  reservationRetry: Client<typeof ReservationRetryService>;
  /** The originality check of an edited version (generation-runner's detector). */
  originality: Client<typeof OriginalityCheckService>;
  /** Publishing destinations and publish requests (webhook-dispatcher). */
  publishing: Client<typeof PublishingService>;
  /** A project's webhook endpoints and their deliveries (webhook-dispatcher). */
  endpoints: Client<typeof WebhookEndpointService>;
}

export function connectServices(config: Pick<GatewayConfig, "services">, credential: Credential): ServiceClients {
  const via = (baseUrl: string) => ({ baseUrl, credential, timeoutMs: 5000 });
  return {
    accounts: serviceClient(AccountsService, via(config.services.accountsBilling)),
    quota: serviceClient(QuotaService, via(config.services.accountsBilling)),
    sessions: serviceClient(SessionService, via(config.services.accountsBilling)),
    tenantAdmin: serviceClient(TenantAdminService, via(config.services.accountsBilling)),
    articles: serviceClient(ArticleStoreService, via(config.services.articleStore)),
    lifecycle: serviceClient(ArticleLifecycleService, via(config.services.articleStore)),
    versions: serviceClient(ArticleVersionService, via(config.services.articleStore)),
    snapshots: serviceClient(WorkflowSnapshotService, via(config.services.workflowCatalog)),
    models: serviceClient(ModelCatalogService, via(config.services.generationRunner)),
    workflows: serviceClient(WorkflowCatalogService, via(config.services.workflowCatalog)),
    // Image bytes are larger than the other answers: a longer deadline of their own.
    images: serviceClient(ArticleImageService, { ...via(config.services.generationRunner), timeoutMs: 15_000 }),
    costs: serviceClient(CostBreakdownService, via(config.services.generationRunner)),
    originality: serviceClient(OriginalityCheckService, via(config.services.generationRunner)),
    erasure: serviceClient(ArticleErasureService, via(config.services.articleStore)),
    runErasure: serviceClient(RunErasureService, via(config.services.generationRunner)),
    deliveryErasure: serviceClient(DeliveryErasureService, via(config.services.webhookDispatcher)),
    reservationErasure: serviceClient(ReservationErasureService, via(config.services.accountsBilling)),
    retries: serviceClient(ArticleRetryService, via(config.services.articleStore)),
    revisions: serviceClient(ArticleRevisionService, via(config.services.articleStore)),
    reservationRetry: serviceClient(ReservationRetryService, via(config.services.accountsBilling)),
    // A connection check waits on the customer's site (up to 30 s a request).
    publishing: serviceClient(PublishingService, { ...via(config.services.webhookDispatcher), timeoutMs: 65_000 }),
    endpoints: serviceClient(WebhookEndpointService, via(config.services.webhookDispatcher)),
  };
}
