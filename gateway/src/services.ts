// The gateway's generated gRPC clients. It reaches services only through these.
import type { Client } from "@connectrpc/connect";
import { AccountsService } from "../../proto/gen/articles/accounts_billing/v1/accounts_pb.ts";
import { QuotaService } from "../../proto/gen/articles/accounts_billing/v1/quota_pb.ts";
import { ArticleStoreService } from "../../proto/gen/articles/article_store/v1/articles_pb.ts";
import { WorkflowSnapshotService } from "../../proto/gen/articles/workflow_catalog/v1/snapshots_pb.ts";
import { ModelCatalogService } from "../../proto/gen/articles/generation_runner/v1/models_pb.ts";
import { WorkflowCatalogService } from "../../proto/gen/articles/workflow_catalog/v1/workflows_pb.ts";
import { serviceClient } from "../../services/kit/src/clients.ts";
import type { GatewayConfig } from "./config.ts";

export interface ServiceClients {
  accounts: Client<typeof AccountsService>;
  quota: Client<typeof QuotaService>;
  articles: Client<typeof ArticleStoreService>;
  snapshots: Client<typeof WorkflowSnapshotService>;
  models: Client<typeof ModelCatalogService>;
  workflows: Client<typeof WorkflowCatalogService>;
}

export function connectServices(config: Pick<GatewayConfig, "services" | "serviceToken">): ServiceClients {
  const via = (baseUrl: string) => ({ baseUrl, serviceToken: config.serviceToken, timeoutMs: 5000 });
  return {
    accounts: serviceClient(AccountsService, via(config.services.accountsBilling)),
    quota: serviceClient(QuotaService, via(config.services.accountsBilling)),
    articles: serviceClient(ArticleStoreService, via(config.services.articleStore)),
    snapshots: serviceClient(WorkflowSnapshotService, via(config.services.workflowCatalog)),
    models: serviceClient(ModelCatalogService, via(config.services.generationRunner)),
    workflows: serviceClient(WorkflowCatalogService, via(config.services.workflowCatalog)),
  };
}
