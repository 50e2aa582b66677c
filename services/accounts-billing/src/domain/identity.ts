// Users, accounts, memberships, projects, plans and keys: reads and operator changes.
import { and, eq, gt, isNull, or, sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { accounts, apiKeys, memberships, plans, projects, subscriptions, users } from "../db/schema.ts";
import { invalidFields, notFound, forbidden, throwIfAny, unauthenticated, type FieldErrors } from "../../../kit/src/errors.ts";
import { preparedPerDatabase } from "../../../kit/src/prepared-statements.ts";
import { displayPrefix, hashToken, isWellFormedToken, newToken } from "./api-keys.ts";
import { membershipCovers, membershipGrants, roleGrants, type AccessLevel, type Role } from "./access.ts";
import { capColumns, checkOwnCaps, type OwnCaps } from "./plan-caps.ts";

export type UserRow = typeof users.$inferSelect;
export type PlanRow = typeof plans.$inferSelect;
export type ProjectRow = typeof projects.$inferSelect;
export type KeyRow = typeof apiKeys.$inferSelect;

/** How far a key reaches within its user's memberships (KeyScope); a key narrowed by nothing has none. */
export interface KeyScope {
  accountOnly: boolean;
  /** Only these projects of the key's account; empty: not narrowed by project. */
  projectIds: number[];
  readOnly: boolean;
}

export interface Principal {
  keyId: number;
  accountId: number;
  user: UserRow;
  plan: PlanRow | null;
  /** Absent for a key narrowed by nothing and for a member acting without a key. */
  scope?: KeyScope;
  /** When the key was last noted in use (tenant-admin.ts noteKeyUse); null when never or without a key. */
  keyLastUsedAt?: Date | null;
}

/** The key's stored scope, or undefined when it narrows nothing. */
export function scopeOf(key: KeyRow): KeyScope | undefined {
  const projectIds = key.scopeProjectIds ?? [];
  if (!key.scopeAccountOnly && !projectIds.length && !key.scopeReadOnly) return undefined;
  return { accountOnly: key.scopeAccountOnly, projectIds, readOnly: key.scopeReadOnly };
}

// Asked on every gateway cache miss (a key or a project access unseen for half a second): built
// once (kit/src/prepared-statements.ts), so a call only binds its values.
const lookups = preparedPerDatabase((db: Db) => ({
  principal: db
    .select({ key: apiKeys, user: users, plan: plans })
    .from(apiKeys)
    .innerJoin(users, eq(users.id, apiKeys.userId))
    .innerJoin(memberships, and(eq(memberships.accountId, apiKeys.accountId), eq(memberships.userId, apiKeys.userId)))
    .leftJoin(subscriptions, and(eq(subscriptions.accountId, apiKeys.accountId), isNull(subscriptions.endedAt)))
    .leftJoin(plans, eq(plans.id, subscriptions.planId))
    .where(and(eq(apiKeys.tokenHash, sql.placeholder("tokenHash")), isNull(apiKeys.revokedAt), or(isNull(apiKeys.expiresAt), gt(apiKeys.expiresAt, sql`now()`))))
    .limit(1)
    .prepare("identity_principal_by_token"),
  projectAccess: db
    .select({ project: projects, membership: memberships })
    .from(projects)
    .innerJoin(memberships, and(eq(memberships.accountId, projects.accountId), eq(memberships.userId, sql.placeholder("userId"))))
    .where(eq(projects.id, sql.placeholder("projectId")))
    .prepare("identity_project_access"),
}));

/** Resolves a bearer token; every refusal looks the same to the caller. */
export async function authenticateKey(db: Db, token: string): Promise<Principal> {
  if (!isWellFormedToken(token)) throw unauthenticated();
  const [row] = await lookups(db).principal.execute({ tokenHash: hashToken(token) });
  if (!row) throw unauthenticated();
  return { keyId: row.key.id, accountId: row.key.accountId, user: row.user, plan: row.plan, scope: scopeOf(row.key), keyLastUsedAt: row.key.lastUsedAt };
}

/** A member acting on an account without a key (a granted workload acting for it): keyId 0. */
export async function resolveMember(db: Db, accountId: number, userId: number): Promise<Principal> {
  const [row] = await db
    .select({ user: users, plan: plans })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .leftJoin(subscriptions, and(eq(subscriptions.accountId, memberships.accountId), isNull(subscriptions.endedAt)))
    .leftJoin(plans, eq(plans.id, subscriptions.planId))
    .where(and(eq(memberships.accountId, accountId), eq(memberships.userId, userId)))
    .limit(1);
  if (!row) throw notFound("No such member of that account.");
  return { keyId: 0, accountId, user: row.user, plan: row.plan };
}

export async function getUser(db: Db, userId: number): Promise<UserRow> {
  const [user] = await db.select().from(users).where(eq(users.id, userId));
  if (!user) throw notFound("No such user.");
  return user;
}

/** The project, with its account's active plan (null without a subscription), whose caps bound it. */
export async function getProject(db: Db, projectId: number): Promise<{ project: ProjectRow; plan: PlanRow | null }> {
  const [row] = await db
    .select({ project: projects, plan: plans })
    .from(projects)
    .leftJoin(subscriptions, and(eq(subscriptions.accountId, projects.accountId), isNull(subscriptions.endedAt)))
    .leftJoin(plans, eq(plans.id, subscriptions.planId))
    .where(eq(projects.id, projectId));
  if (!row) throw notFound("No such project.");
  return row;
}

/** Another account's project is "not found"; a visible one with too little access is "forbidden". */
export async function authorizeProject(db: Db, userId: number, projectId: number, level: AccessLevel): Promise<ProjectRow> {
  const [row] = await lookups(db).projectAccess.execute({ userId, projectId });
  if (!row) throw notFound("Project not found.");
  if (!membershipCovers(row.membership.projectIds, projectId) || !membershipGrants(row.membership, projectId, level)) {
    throw forbidden("This action is unauthorized.");
  }
  return row.project;
}

export async function listViewableProjects(db: Db, userId: number): Promise<ProjectRow[]> {
  const rows = await db
    .select({ project: projects, membership: memberships })
    .from(projects)
    .innerJoin(memberships, and(eq(memberships.accountId, projects.accountId), eq(memberships.userId, userId)))
    .orderBy(projects.id);
  return rows.filter((r) => membershipCovers(r.membership.projectIds, r.project.id) && roleGrants(r.membership.role, "view")).map((r) => r.project);
}

// ---- operator changes ----

function requireText(fields: FieldErrors, name: string, value: string, max = 255) {
  if (!value.trim()) fields[name] = [`The ${name} field is required.`];
  else if (value.length > max) fields[name] = [`The ${name} field must not be greater than ${max} characters.`];
}

export interface PlanInput {
  name: string;
  monthlyWords: number;
  requestsPerMinute: number;
  requestsPerHour: number;
  requestsPerDay: number;
  /** Explicit cap on an account's articles in flight at once in the generation runner; unset (or null): no cap of its own. */
  articlesInFlight?: number | null;
  /** The account's weight in the runners' fair shares between accounts with work waiting; unset: 1 on creation. */
  shareWeight?: number;
  /** The plan's own caps (plan-caps.ts); null (on update) returns one to the deployment's default. */
  caps?: OwnCaps;
}

/** The bounds of a plan's articles_in_flight and share_weight. */
export const ARTICLES_IN_FLIGHT_MIN = 1;
export const ARTICLES_IN_FLIGHT_MAX = 100_000;
export const SHARE_WEIGHT_MIN = 1;
export const SHARE_WEIGHT_MAX = 100;

/** A value that is set (not undefined or null) must be a whole number from min to max. */
function requireWholeNumberIn(fields: FieldErrors, name: string, value: number | null | undefined, min: number, max: number) {
  if (value !== undefined && value !== null && (!Number.isInteger(value) || value < min || value > max)) {
    fields[name] = [`${name} must be a whole number from ${min} to ${max.toLocaleString("en-US")}.`];
  }
}

function checkPlan(input: Partial<PlanInput>, fields: FieldErrors) {
  const { articlesInFlight, shareWeight, caps = {}, ...rest } = input;
  if (rest.name !== undefined) requireText(fields, "name", rest.name);
  for (const [key, value] of Object.entries(rest)) {
    if (key !== "name" && value !== undefined && (typeof value !== "number" || !Number.isInteger(value) || value < 0)) {
      fields[key] = [`${key} must be a whole number of at least 0.`];
    }
  }
  requireWholeNumberIn(fields, "articles_in_flight", articlesInFlight, ARTICLES_IN_FLIGHT_MIN, ARTICLES_IN_FLIGHT_MAX);
  requireWholeNumberIn(fields, "share_weight", shareWeight, SHARE_WEIGHT_MIN, SHARE_WEIGHT_MAX);
  checkOwnCaps(caps, fields);
}

export async function createPlan(db: Db, input: PlanInput): Promise<PlanRow> {
  const fields: FieldErrors = {};
  checkPlan(input, fields);
  throwIfAny(fields);
  const { caps = {}, ...columns } = input;
  const [plan] = await db.insert(plans).values({ ...columns, ...capColumns(caps) }).returning();
  return plan;
}

/**
 * Changes the fields that are set; articlesInFlight null removes the plan's cap (accounts on it
 * have no cap of their own), undefined leaves it.
 */
export async function updatePlan(db: Db, planId: number, input: Partial<PlanInput>): Promise<PlanRow> {
  const fields: FieldErrors = {};
  checkPlan(input, fields);
  throwIfAny(fields);
  const { caps = {}, ...columns } = input;
  const changes = { ...Object.fromEntries(Object.entries(columns).filter(([, v]) => v !== undefined)), ...capColumns(caps) };
  const [plan] = Object.keys(changes).length
    ? await db.update(plans).set(changes).where(eq(plans.id, planId)).returning()
    : await db.select().from(plans).where(eq(plans.id, planId));
  if (!plan) throw notFound("No such plan.");
  return plan;
}

export async function activePlanId(db: Db, accountId: number): Promise<number | null> {
  const [row] = await db.select({ planId: subscriptions.planId }).from(subscriptions).where(and(eq(subscriptions.accountId, accountId), isNull(subscriptions.endedAt)));
  return row?.planId ?? null;
}

export async function createAccount(db: Db, name: string, planId?: number) {
  const fields: FieldErrors = {};
  requireText(fields, "name", name);
  throwIfAny(fields);
  return db.transaction(async (tx) => {
    const [account] = await tx.insert(accounts).values({ name }).returning();
    if (planId !== undefined) await startSubscription(tx as unknown as Db, account.id, planId);
    return { ...account, planId: planId ?? null };
  });
}

/** Ends any active subscription and starts one on planId, atomically. */
export async function startSubscription(db: Db, accountId: number, planId: number): Promise<void> {
  const [plan] = await db.select({ id: plans.id }).from(plans).where(eq(plans.id, planId));
  if (!plan) throw notFound("No such plan.");
  const [account] = await db.select({ id: accounts.id }).from(accounts).where(eq(accounts.id, accountId)).for("update");
  if (!account) throw notFound("No such account.");
  await db.update(subscriptions).set({ endedAt: new Date() }).where(and(eq(subscriptions.accountId, accountId), isNull(subscriptions.endedAt)));
  await db.insert(subscriptions).values({ accountId, planId });
}

export async function subscribe(db: Db, accountId: number, planId: number) {
  await db.transaction((tx) => startSubscription(tx as unknown as Db, accountId, planId));
  return getAccount(db, accountId);
}

export async function unsubscribe(db: Db, accountId: number) {
  const account = await getAccount(db, accountId);
  await db.update(subscriptions).set({ endedAt: new Date() }).where(and(eq(subscriptions.accountId, accountId), isNull(subscriptions.endedAt)));
  return { ...account, planId: null };
}

export async function getAccount(db: Db, accountId: number) {
  const [account] = await db.select().from(accounts).where(eq(accounts.id, accountId));
  if (!account) throw notFound("No such account.");
  return { ...account, planId: await activePlanId(db, accountId) };
}

export async function createUser(db: Db, name: string, email: string): Promise<UserRow> {
  const fields: FieldErrors = {};
  requireText(fields, "name", name);
  if (!/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email)) fields.email = ["The email field must be a valid email address."];
  throwIfAny(fields);
  const [taken] = await db.select({ id: users.id }).from(users).where(eq(users.email, email.toLowerCase()));
  if (taken) throw invalidFields({ email: ["The email has already been taken."] });
  const [user] = await db.insert(users).values({ name, email: email.toLowerCase(), emailVerifiedAt: new Date() }).returning();
  return user;
}

export async function disableUser(db: Db, userId: number): Promise<UserRow> {
  const [user] = await db.update(users).set({ disabledAt: new Date(), updatedAt: new Date() }).where(eq(users.id, userId)).returning();
  if (!user) throw notFound("No such user.");
  return user;
}

/**
 * Adds a member, or changes one. `viewOnlyProjectIds`: projects of the account on which the
 * member has view access only (undefined leaves a present member's as they are).
 */
export async function addMember(db: Db, accountId: number, userId: number, role: Role, projectIds: number[], viewOnlyProjectIds?: number[]) {
  await getAccount(db, accountId);
  await getUser(db, userId);
  if (projectIds.length || viewOnlyProjectIds?.length) {
    const own = await db.select({ id: projects.id }).from(projects).where(eq(projects.accountId, accountId));
    const fields: FieldErrors = {};
    const foreign = projectIds.filter((id) => !own.some((p) => p.id === id));
    if (foreign.length) fields.project_ids = [`Projects ${foreign.join(", ")} do not belong to account ${accountId}.`];
    const foreignViews = (viewOnlyProjectIds ?? []).filter((id) => !own.some((p) => p.id === id));
    if (foreignViews.length) fields.view_only_project_ids = [`Projects ${foreignViews.join(", ")} do not belong to account ${accountId}.`];
    throwIfAny(fields);
  }
  const changes = {
    role,
    projectIds: projectIds.length ? projectIds : null,
    ...(viewOnlyProjectIds === undefined ? {} : { viewOnlyProjectIds: viewOnlyProjectIds.length ? [...new Set(viewOnlyProjectIds)] : null }),
  };
  const [membership] = await db
    .insert(memberships)
    .values({ accountId, userId, ...changes })
    .onConflictDoUpdate({ target: [memberships.accountId, memberships.userId], set: changes })
    .returning();
  // The dashboard's selection defaults to the first account a user joins.
  await db.update(users).set({ currentAccountId: accountId, updatedAt: new Date() }).where(and(eq(users.id, userId), isNull(users.currentAccountId)));
  return membership;
}

export async function removeMember(db: Db, accountId: number, userId: number): Promise<void> {
  const removed = await db.delete(memberships).where(and(eq(memberships.accountId, accountId), eq(memberships.userId, userId))).returning();
  if (!removed.length) throw notFound("No such membership.");
}

export async function createProject(db: Db, accountId: number, name: string, defaultAudience?: string): Promise<ProjectRow> {
  const fields: FieldErrors = {};
  requireText(fields, "name", name);
  if (defaultAudience !== undefined && defaultAudience.length > 1000) fields.audience = ["The audience must not be greater than 1000 characters."];
  throwIfAny(fields);
  await getAccount(db, accountId);
  const [project] = await db.insert(projects).values({ accountId, name, defaultAudience: defaultAudience ?? null }).returning();
  await db
    .update(users)
    .set({ currentProjectId: project.id, updatedAt: new Date() })
    .where(and(eq(users.currentAccountId, accountId), isNull(users.currentProjectId), sql`exists (select 1 from ${memberships} m where m.account_id = ${accountId} and m.user_id = ${users.id})`));
  return project;
}

/** A scope's projects must be the key's account's own, and a scope names its account or projects of it, not both. */
async function checkScope(db: Db, accountId: number, scope: KeyScope | undefined): Promise<void> {
  if (!scope?.projectIds.length) return;
  if (scope.accountOnly) throw invalidFields({ "scope.project_ids": ["A key is scoped to its account or to projects of it, not both."] });
  const own = await db.select({ id: projects.id }).from(projects).where(eq(projects.accountId, accountId));
  const foreign = scope.projectIds.filter((id) => !own.some((p) => p.id === id));
  if (foreign.length) throw invalidFields({ "scope.project_ids": [`Projects ${foreign.join(", ")} do not belong to account ${accountId}.`] });
}

export async function createApiKey(db: Db, accountId: number, userId: number, expiresAt?: Date, scope?: KeyScope): Promise<{ key: KeyRow; token: string }> {
  const [membership] = await db.select().from(memberships).where(and(eq(memberships.accountId, accountId), eq(memberships.userId, userId)));
  if (!membership) throw invalidFields({ user: [`User ${userId} is not a member of account ${accountId}.`] });
  await checkScope(db, accountId, scope);
  const token = newToken();
  const [key] = await db
    .insert(apiKeys)
    .values({
      accountId,
      userId,
      tokenHash: hashToken(token),
      prefix: displayPrefix(token),
      expiresAt: expiresAt ?? null,
      scopeAccountOnly: scope?.accountOnly ?? false,
      scopeProjectIds: scope?.projectIds.length ? [...new Set(scope.projectIds)] : null,
      scopeReadOnly: scope?.readOnly ?? false,
    })
    .returning();
  return { key, token };
}

/** The account's keys, oldest first. */
export async function listApiKeys(db: Db, accountId: number): Promise<KeyRow[]> {
  await getAccount(db, accountId);
  return db.select().from(apiKeys).where(eq(apiKeys.accountId, accountId)).orderBy(apiKeys.id);
}

export async function revokeApiKey(db: Db, keyId: number): Promise<KeyRow> {
  const [key] = await db.update(apiKeys).set({ revokedAt: sql`coalesce(${apiKeys.revokedAt}, now())` }).where(eq(apiKeys.id, keyId)).returning();
  if (!key) throw notFound("No such key.");
  return key;
}

export const DEMO_PLAN: PlanInput = { name: "Demo", monthlyWords: 200_000, requestsPerMinute: 60, requestsPerHour: 1_000, requestsPerDay: 10_000 };

/** An account on a plan, its owner, a project and a key, all or nothing. */
export async function createDemoTenant(db: Db) {
  return db.transaction(async (t) => {
    const tx = t as unknown as Db;
    const plan = await createPlan(tx, DEMO_PLAN);
    const account = await createAccount(tx, "Demo account", plan.id);
    const user = await createUser(tx, "Demo user", `demo+${account.id}@example.com`);
    await addMember(tx, account.id, user.id, "owner", []);
    const project = await createProject(tx, account.id, "Demo project", "Readers new to the topic");
    const { key, token } = await createApiKey(tx, account.id, user.id);
    return { plan, account: { ...account, planId: plan.id }, user: await getUser(tx, user.id), project, key, token };
  });
}

/** Creates the demo tenant only on a deployment's first start (no account yet). */
export async function ensureDemoTenant(db: Db) {
  return db.transaction(async (t) => {
    const tx = t as unknown as Db;
    // Serialises concurrent first starts.
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext('accounts_billing:demo-tenant'))`);
    const [any] = await tx.select({ id: accounts.id }).from(accounts).limit(1);
    if (any) return null;
    return createDemoTenant(tx);
  });
}
