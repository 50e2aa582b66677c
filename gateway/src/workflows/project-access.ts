// Project access for the workflow endpoints (spec 5.6, 5.7): view for reads, update for writes,
// asked of accounts-billing on every request. Another account's project answers 404 (NOT_FOUND),
// a visible project with too little access 403 (PERMISSION_DENIED); both map through errors.ts.
import { AccessLevel } from "../../../proto/gen/articles/accounts_billing/v1/accounts_pb.ts";
import type { Caller } from "../plugins/caller.ts";
import type { ServiceClients } from "../services.ts";

export type ProjectAccess = "view" | "update";

const LEVEL: Record<ProjectAccess, AccessLevel> = { view: AccessLevel.VIEW, update: AccessLevel.UPDATE };

export async function authorizeProject(clients: ServiceClients, caller: Caller, projectId: number, access: ProjectAccess): Promise<void> {
  await clients.accounts.authorizeProject({ userId: BigInt(caller.userId), projectId: BigInt(projectId), level: LEVEL[access] });
}
