// The CLI is a gRPC client of the services, never a second path into their tables.
import type { Client } from "@connectrpc/connect";
import { OperatorService } from "../../proto/gen/articles/accounts_billing/v1/operator_pb.ts";
import { QuotaService } from "../../proto/gen/articles/accounts_billing/v1/quota_pb.ts";
import { ArticleLifecycleService, ArticleStoreService } from "../../proto/gen/articles/article_store/v1/articles_pb.ts";
import { ArticleErasureService } from "../../proto/gen/articles/article_store/v1/erasure_pb.ts";
import { RunErasureService } from "../../proto/gen/articles/generation_runner/v1/erasure_pb.ts";
import { DeliveryErasureService } from "../../proto/gen/articles/webhook_dispatcher/v1/erasure_pb.ts";
import { ReservationErasureService } from "../../proto/gen/articles/accounts_billing/v1/erasure_pb.ts";
import type { ErasureClients } from "../../services/kit/src/article-erasure-steps.ts";
import { SessionService } from "../../proto/gen/articles/accounts_billing/v1/self_service_pb.ts";
import { PublishingService } from "../../proto/gen/articles/webhook_dispatcher/v1/publishing_pb.ts";
import { WebhookSigningService } from "../../proto/gen/articles/webhook_dispatcher/v1/signing_pb.ts";
import { ModelCatalogService } from "../../proto/gen/articles/generation_runner/v1/models_pb.ts";
import { serviceClient } from "../../services/kit/src/clients.ts";
import { envOptional, loadServiceUrls, type ServiceUrls } from "../../services/kit/src/config.ts";
import { OwnToken, type Credential } from "../../services/kit/src/workload-identity.ts";
import { LOCAL_OPERATOR_TOKEN_FILE } from "../local/local-secrets.ts";

export interface AdminClients {
  urls: ServiceUrls;
  operator: Client<typeof OperatorService>;
  quota: Client<typeof QuotaService>;
  /** One-time links for users to set a password (the dashboard's sign-in). */
  sessions: Client<typeof SessionService>;
  articles: Client<typeof ArticleStoreService>;
  webhookSigning: Client<typeof WebhookSigningService>;
  publishing: Client<typeof PublishingService>;
  models: Client<typeof ModelCatalogService>;
  /** An article's erasure on request (`article erase`), service by service. */
  erasureClients: ErasureClients;
}

/**
 * The operator's identity: the token in OPERATOR_TOKEN_FILE (on Kubernetes, e.g. from
 * `kubectl -n article-service create token operator --audience article-service`), else the one `npm start`
 * keeps for this machine.
 */
export function operatorCredential(env: Record<string, string | undefined>): Credential {
  return new OwnToken(envOptional(env, "OPERATOR_TOKEN_FILE") ?? LOCAL_OPERATOR_TOKEN_FILE, "OPERATOR_TOKEN_FILE");
}

export function adminClients(env: Record<string, string | undefined>, credential: Credential): AdminClients {
  const urls = loadServiceUrls(env);
  const via = (baseUrl: string) => ({ baseUrl, credential, timeoutMs: 10_000 });
  return {
    urls,
    operator: serviceClient(OperatorService, via(urls.accountsBilling)),
    quota: serviceClient(QuotaService, via(urls.accountsBilling)),
    sessions: serviceClient(SessionService, via(urls.accountsBilling)),
    articles: serviceClient(ArticleStoreService, via(urls.articleStore)),
    webhookSigning: serviceClient(WebhookSigningService, via(urls.webhookDispatcher)),
    publishing: serviceClient(PublishingService, via(urls.webhookDispatcher)),
    models: serviceClient(ModelCatalogService, via(urls.generationRunner)),
    erasureClients: {
      lifecycle: serviceClient(ArticleLifecycleService, via(urls.articleStore)),
      erasure: serviceClient(ArticleErasureService, via(urls.articleStore)),
      runErasure: serviceClient(RunErasureService, via(urls.generationRunner)),
      deliveryErasure: serviceClient(DeliveryErasureService, via(urls.webhookDispatcher)),
      reservationErasure: serviceClient(ReservationErasureService, via(urls.accountsBilling)),
    },
  };
}
