// Builds tenants for tests through the operator contract (the same gRPC calls the CLI makes).
import { randomBytes } from "node:crypto";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { OperatorService, Role } from "../../proto/gen/articles/accounts_billing/v1/operator_pb.ts";
import { stackClient } from "./service-clients.ts";
import type { TestStack } from "./stack.ts";

export const operatorClient = (stack: TestStack) => stackClient(stack, OperatorService, stack.env.ACCOUNTS_BILLING_URL, "operator");

export interface TenantOptions {
  monthlyWords?: number;
  perMinute?: number;
  perHour?: number;
  perDay?: number;
  subscribed?: boolean;
  audience?: string;
  /** The plan's weight in the runners' fair shares between accounts (1 when unset). */
  shareWeight?: number;
  /** The plan's cap on the account's articles in flight at once (none when unset). */
  articlesInFlight?: number;
  /** The plan's own tenant caps (TenantCaps: stepsPerWorkflow, …); unset ones follow the deployment's defaults. */
  caps?: Partial<Record<"stepsPerWorkflow" | "promptCharacters" | "workflowsPerProject" | "destinationsPerProject" | "openEventStreams", number>>;
}

export interface Tenant {
  accountId: number;
  userId: number;
  projectId: number;
  planId: number;
  keyId: number;
  token: string;
  email: string;
}

const ROLE: Record<string, Role> = { owner: Role.OWNER, admin: Role.ADMIN, editor: Role.EDITOR, viewer: Role.VIEWER };

/** An account on its own plan with an owner, a project and a key. */
export async function createTenant(stack: TestStack, opts: TenantOptions = {}): Promise<Tenant> {
  const op = operatorClient(stack);
  const { plan } = await op.createPlan({
    name: "Test plan",
    monthlyWords: BigInt(opts.monthlyWords ?? 1_000_000),
    requestsPerMinute: opts.perMinute ?? 10_000,
    requestsPerHour: opts.perHour ?? 100_000,
    requestsPerDay: opts.perDay ?? 1_000_000,
    shareWeight: opts.shareWeight,
    articlesInFlight: opts.articlesInFlight,
    caps: opts.caps,
  });
  const { account } = await op.createAccount({ name: "Test account", planId: opts.subscribed === false ? undefined : plan!.id });
  const email = `user-${randomBytes(5).toString("hex")}@example.com`;
  const { user } = await op.createUser({ name: "Test user", email });
  await op.addMember({ accountId: account!.id, userId: user!.id, role: Role.OWNER });
  const { project } = await op.createProject({ accountId: account!.id, name: "Test project", defaultAudience: opts.audience });
  const { key, token } = await op.createApiKey({ accountId: account!.id, userId: user!.id });
  return {
    accountId: Number(account!.id),
    userId: Number(user!.id),
    projectId: Number(project!.id),
    planId: Number(plan!.id),
    keyId: Number(key!.id),
    token,
    email,
  };
}

/** Another user in the tenant's account with a role (and optional project limit), with a key. */
export async function addMemberWithKey(stack: TestStack, tenant: Tenant, role: keyof typeof ROLE, projectIds: number[] = [], expiresAt?: Date) {
  const op = operatorClient(stack);
  const { user } = await op.createUser({ name: `A ${role}`, email: `${role}-${randomBytes(5).toString("hex")}@example.com` });
  await op.addMember({ accountId: BigInt(tenant.accountId), userId: user!.id, role: ROLE[role], projectIds: projectIds.map(BigInt) });
  const { key, token } = await op.createApiKey({ accountId: BigInt(tenant.accountId), userId: user!.id, expiresAt: expiresAt ? timestampFromDate(expiresAt) : undefined });
  return { userId: Number(user!.id), keyId: Number(key!.id), token };
}

export async function createProject(stack: TestStack, accountId: number, name = "Another project", audience?: string): Promise<number> {
  const { project } = await operatorClient(stack).createProject({ accountId: BigInt(accountId), name, defaultAudience: audience });
  return Number(project!.id);
}
