// The gateway's generated gRPC clients. It reaches services only through these.
import type { Client } from "@connectrpc/connect";
import { AccountsService } from "../../proto/gen/articles/accounts_billing/v1/accounts_pb.ts";
import { QuotaService } from "../../proto/gen/articles/accounts_billing/v1/quota_pb.ts";
import { serviceClient } from "../../services/kit/src/clients.ts";
import type { GatewayConfig } from "./config.ts";

export interface ServiceClients {
  accounts: Client<typeof AccountsService>;
  quota: Client<typeof QuotaService>;
}

export function connectServices(config: Pick<GatewayConfig, "services" | "serviceToken">): ServiceClients {
  const via = (baseUrl: string) => ({ baseUrl, serviceToken: config.serviceToken, timeoutMs: 5000 });
  return {
    accounts: serviceClient(AccountsService, via(config.services.accountsBilling)),
    quota: serviceClient(QuotaService, via(config.services.accountsBilling)),
  };
}
