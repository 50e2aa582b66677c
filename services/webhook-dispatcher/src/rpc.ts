// gRPC handlers of webhook-dispatcher: thin translations between proto messages and the domain.
import type { ConnectRouter } from "@connectrpc/connect";
import type { Client } from "@connectrpc/connect";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { AccountsService } from "../../../proto/gen/articles/accounts_billing/v1/accounts_pb.ts";
import { WebhookSigningService } from "../../../proto/gen/articles/webhook_dispatcher/v1/signing_pb.ts";
import { invalidFields } from "../../kit/src/errors.ts";
import type { Db } from "./db/client.ts";
import { removeSigningSecret, setSigningSecret, signingSecretCreatedAt } from "./domain/signing-secrets.ts";

function projectIdOf(value: bigint): number {
  if (value <= 0n) throw invalidFields({ project_id: ["project_id must be a positive integer."] });
  return Number(value);
}

export function webhookDispatcherRoutes(db: Db, secretKey: Buffer, accounts: Client<typeof AccountsService>) {
  return (router: ConnectRouter) => {
    router.service(WebhookSigningService, {
      async setSigningSecret(req) {
        const projectId = projectIdOf(req.projectId);
        // NOT_FOUND from accounts-billing passes through: no secret for a project that does not exist.
        await accounts.getProject({ projectId: req.projectId });
        const { secret, createdAt } = await setSigningSecret(db, secretKey, projectId);
        return { secret, createdAt: timestampFromDate(createdAt) };
      },
      removeSigningSecret: async (req) => ({ removed: await removeSigningSecret(db, projectIdOf(req.projectId)) }),
      async getSigningStatus(req) {
        const createdAt = await signingSecretCreatedAt(db, projectIdOf(req.projectId));
        return { signed: createdAt !== undefined, secretCreatedAt: createdAt ? timestampFromDate(createdAt) : undefined };
      },
    });
  };
}
