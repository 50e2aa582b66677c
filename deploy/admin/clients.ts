// The CLI is a gRPC client of the services, never a second path into their tables.
import type { Client } from "@connectrpc/connect";
import { OperatorService } from "../../proto/gen/articles/accounts_billing/v1/operator_pb.ts";
import { QuotaService } from "../../proto/gen/articles/accounts_billing/v1/quota_pb.ts";
import { ArticleStoreService } from "../../proto/gen/articles/article_store/v1/articles_pb.ts";
import { WebhookSigningService } from "../../proto/gen/articles/webhook_dispatcher/v1/signing_pb.ts";
import { ModelCatalogService } from "../../proto/gen/articles/generation_runner/v1/models_pb.ts";
import { serviceClient } from "../../services/kit/src/clients.ts";
import { loadServiceUrls, type ServiceUrls } from "../../services/kit/src/config.ts";

export interface AdminClients {
  urls: ServiceUrls;
  serviceToken: string;
  operator: Client<typeof OperatorService>;
  quota: Client<typeof QuotaService>;
  articles: Client<typeof ArticleStoreService>;
  webhookSigning: Client<typeof WebhookSigningService>;
  models: Client<typeof ModelCatalogService>;
}

export function adminClients(env: Record<string, string | undefined>, serviceToken: string): AdminClients {
  const urls = loadServiceUrls(env);
  const via = (baseUrl: string) => ({ baseUrl, serviceToken, timeoutMs: 10_000 });
  return {
    urls,
    serviceToken,
    operator: serviceClient(OperatorService, via(urls.accountsBilling)),
    quota: serviceClient(QuotaService, via(urls.accountsBilling)),
    articles: serviceClient(ArticleStoreService, via(urls.articleStore)),
    webhookSigning: serviceClient(WebhookSigningService, via(urls.webhookDispatcher)),
    models: serviceClient(ModelCatalogService, via(urls.generationRunner)),
  };
}
