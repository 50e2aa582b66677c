// What an account's members manage themselves from the dashboard: keys, members, the selected
// account, and the audit log of those changes. Every change names its actor, whose membership of
// the account is checked first; each change and its audit event are written in one transaction.
import { and, asc, desc, eq, sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { accounts, apiKeys, auditEvents, memberships, projects, users } from "../db/schema.ts";
import { forbidden, invalidFields, notFound, precondition, throwIfAny, type FieldErrors } from "../../../kit/src/errors.ts";
import { addMember, createApiKey, createUser, getUser, revokeApiKey, type KeyRow, type KeyScope, type UserRow } from "./identity.ts";
import { createPasswordLink } from "./sessions.ts";
import { queueMail } from "./mail-outbox.ts";
import type { Role } from "./access.ts";

export interface Acting {
  userId: number;
  accountId: number;
}

type MembershipRow = typeof memberships.$inferSelect;

export const KEY_NAME_MAX = 100;
/** A rolled key's old token works at most this long after the roll. */
export const ROLL_GRACE_MAX_SECONDS = 7 * 86400;

const managesAccount = (role: Role) => role === "owner" || role === "admin";

/** The actor's membership of the account; NOT_FOUND when there is none (the account is not theirs to see). */
async function membershipOf(db: Db, { userId, accountId }: Acting): Promise<MembershipRow> {
  const [m] = await db.select().from(memberships).where(and(eq(memberships.accountId, accountId), eq(memberships.userId, userId)));
  if (!m) throw notFound("No such account.");
  return m;
}

async function requireManager(db: Db, acting: Acting): Promise<MembershipRow> {
  const m = await membershipOf(db, acting);
  if (!managesAccount(m.role)) throw forbidden("Only the account's owners and admins may do this.");
  return m;
}

async function audit(db: Db, acting: Acting, action: string, subject: string): Promise<void> {
  await db.insert(auditEvents).values({ accountId: acting.accountId, actorUserId: acting.userId, action, subject });
}

const inTransaction = <T>(db: Db, work: (tx: Db) => Promise<T>) => db.transaction((t) => work(t as unknown as Db));

// ---- accounts ----

export async function listUserAccounts(db: Db, userId: number) {
  return db
    .select({ id: accounts.id, name: accounts.name, createdAt: accounts.createdAt, role: memberships.role })
    .from(memberships)
    .innerJoin(accounts, eq(accounts.id, memberships.accountId))
    .where(eq(memberships.userId, userId))
    .orderBy(asc(accounts.id));
}

/** Selects the account the dashboard shows, and its first project the user reaches (if any). */
export async function switchAccount(db: Db, acting: Acting): Promise<UserRow> {
  const m = await membershipOf(db, acting);
  const own = await db.select({ id: projects.id }).from(projects).where(eq(projects.accountId, acting.accountId)).orderBy(asc(projects.id));
  const first = own.find((p) => !m.projectIds?.length || m.projectIds.includes(p.id));
  const [user] = await db
    .update(users)
    .set({ currentAccountId: acting.accountId, currentProjectId: first?.id ?? null, updatedAt: new Date() })
    .where(eq(users.id, acting.userId))
    .returning();
  return user!;
}

// ---- keys ----

export interface ManagedKey {
  key: KeyRow;
  creator: UserRow;
}

async function keysOf(db: Db, accountId: number, filter: { userId?: number; keyId?: number }): Promise<ManagedKey[]> {
  const rows = await db
    .select({ key: apiKeys, creator: users })
    .from(apiKeys)
    .innerJoin(users, eq(users.id, apiKeys.userId))
    .where(and(eq(apiKeys.accountId, accountId), filter.userId === undefined ? undefined : eq(apiKeys.userId, filter.userId), filter.keyId === undefined ? undefined : eq(apiKeys.id, filter.keyId)))
    .orderBy(desc(apiKeys.id));
  return rows;
}

/** Owners and admins see every key of the account; other members their own. */
export async function listKeys(db: Db, acting: Acting): Promise<ManagedKey[]> {
  const m = await membershipOf(db, acting);
  return keysOf(db, acting.accountId, managesAccount(m.role) ? {} : { userId: acting.userId });
}

/** A key the actor may change: any of the account's for a manager, their own for a member. */
async function changeableKey(db: Db, acting: Acting, keyId: number): Promise<ManagedKey> {
  const m = await membershipOf(db, acting);
  const [found] = await keysOf(db, acting.accountId, { keyId, userId: managesAccount(m.role) ? undefined : acting.userId });
  if (!found) throw notFound("No such key.");
  return found;
}

function checkKeyName(name: string, fields: FieldErrors): void {
  if (!name.trim()) fields.name = ["The name field is required."];
  else if ([...name].length > KEY_NAME_MAX) fields.name = [`The name must not be greater than ${KEY_NAME_MAX} characters.`];
}

export async function createKey(db: Db, acting: Acting, input: { name: string; expiresAt?: Date; scope?: KeyScope }): Promise<{ key: ManagedKey; token: string }> {
  const fields: FieldErrors = {};
  checkKeyName(input.name, fields);
  if (input.expiresAt && input.expiresAt.getTime() <= Date.now()) fields.expires_at = ["The expiry must be in the future."];
  throwIfAny(fields);
  await membershipOf(db, acting);
  return inTransaction(db, async (tx) => {
    const { key, token } = await createApiKey(tx, acting.accountId, acting.userId, input.expiresAt, input.scope);
    const [named] = await tx.update(apiKeys).set({ name: input.name.trim() }).where(eq(apiKeys.id, key.id)).returning();
    await audit(tx, acting, "key.created", `key ${key.id} (${named!.name}, ${key.prefix}…)`);
    return { key: { key: named!, creator: await getUser(tx, acting.userId) }, token };
  });
}

export async function revokeKey(db: Db, acting: Acting, keyId: number): Promise<ManagedKey> {
  const { creator } = await changeableKey(db, acting, keyId);
  return inTransaction(db, async (tx) => {
    const key = await revokeApiKey(tx, keyId);
    await audit(tx, acting, "key.revoked", `key ${key.id} (${key.name || "unnamed"}, ${key.prefix}…)`);
    return { key, creator };
  });
}

/** A new key like the old one (name, scope, user, expiry); the old one expires after the grace. */
export async function rollKey(db: Db, acting: Acting, keyId: number, graceSeconds: number): Promise<{ key: ManagedKey; token: string; oldKey: ManagedKey }> {
  if (!Number.isInteger(graceSeconds) || graceSeconds < 0 || graceSeconds > ROLL_GRACE_MAX_SECONDS) {
    throw invalidFields({ grace_seconds: [`The grace must be a whole number of seconds from 0 to ${ROLL_GRACE_MAX_SECONDS}.`] });
  }
  const old = await changeableKey(db, acting, keyId);
  if (old.key.revokedAt) throw precondition("A revoked key cannot be rolled.");
  return inTransaction(db, async (tx) => {
    const scope = { accountOnly: old.key.scopeAccountOnly, projectIds: old.key.scopeProjectIds ?? [], readOnly: old.key.scopeReadOnly };
    const keepExpiry = old.key.expiresAt && old.key.expiresAt.getTime() > Date.now() ? old.key.expiresAt : undefined;
    const { key, token } = await createApiKey(tx, acting.accountId, old.key.userId, keepExpiry, scope);
    const [named] = await tx.update(apiKeys).set({ name: old.key.name }).where(eq(apiKeys.id, key.id)).returning();
    // The old key ends at the grace's end, or sooner if it was to expire before.
    const [ending] = await tx
      .update(apiKeys)
      .set({ expiresAt: sql`least(coalesce(${apiKeys.expiresAt}, 'infinity'), now() + ${graceSeconds} * interval '1 second')` })
      .where(eq(apiKeys.id, keyId))
      .returning();
    await audit(tx, acting, "key.rolled", `key ${keyId} replaced by key ${key.id} (${old.key.name || "unnamed"}), old one working ${graceSeconds} s more`);
    return { key: { key: named!, creator: old.creator }, token, oldKey: { key: ending!, creator: old.creator } };
  });
}

// ---- members ----

export interface Member {
  user: UserRow;
  role: Role;
  projectIds: number[];
  /** Projects on which the member has view access only. */
  viewOnlyProjectIds: number[];
}

/** A member's role and project access, as an owner or admin sets them. */
export interface MemberAccess {
  role: Role;
  /** The projects the member reaches; empty: every project of the account. */
  projectIds: number[];
  /** Of those, the ones the member may only view. */
  viewOnlyProjectIds: number[];
}

const accessText = (a: MemberAccess) =>
  `${a.role}${a.projectIds.length ? `, projects ${a.projectIds.join(", ")}` : ""}${a.viewOnlyProjectIds.length ? `, view only on ${a.viewOnlyProjectIds.join(", ")}` : ""}`;

export async function listMembers(db: Db, acting: Acting): Promise<Member[]> {
  await requireManager(db, acting);
  const rows = await db
    .select({ user: users, role: memberships.role, projectIds: memberships.projectIds, viewOnlyProjectIds: memberships.viewOnlyProjectIds })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(eq(memberships.accountId, acting.accountId))
    .orderBy(asc(users.id));
  return rows.map((r) => ({ user: r.user, role: r.role, projectIds: r.projectIds ?? [], viewOnlyProjectIds: r.viewOnlyProjectIds ?? [] }));
}

/** Owners alone make, change or remove owners. */
function checkRoleChange(actor: MembershipRow, from: Role | undefined, to: Role | undefined): void {
  if (actor.role !== "owner" && (from === "owner" || to === "owner")) throw forbidden("Only an owner may make, change or remove an owner.");
}

async function memberRow(db: Db, accountId: number, userId: number): Promise<MembershipRow | undefined> {
  const [m] = await db.select().from(memberships).where(and(eq(memberships.accountId, accountId), eq(memberships.userId, userId)));
  return m;
}

async function memberOf(db: Db, accountId: number, userId: number): Promise<Member> {
  const m = await memberRow(db, accountId, userId);
  if (!m) throw notFound("No such member.");
  return { user: await getUser(db, userId), role: m.role, projectIds: m.projectIds ?? [], viewOnlyProjectIds: m.viewOnlyProjectIds ?? [] };
}

/**
 * Adds a member by address. A new user gets a one-time link to set a password (returned for the
 * inviter to pass on, and mailed to the invitee with a link of its own when `mailing`); a user
 * who already has one is only added, so no inviter can take over an existing user's sign-in.
 */
export async function inviteMember(db: Db, acting: Acting, input: { email: string; name: string } & MemberAccess, opts: { mailing?: boolean } = {}) {
  const actor = await requireManager(db, acting);
  checkRoleChange(actor, undefined, input.role);
  const email = input.email.trim().toLowerCase();
  return inTransaction(db, async (tx) => {
    let [user] = await tx.select().from(users).where(eq(users.email, email));
    if (!user) {
      user = await createUser(tx, input.name.trim() || email.split("@")[0] || email, email);
      // Not verified until the invitee uses the link.
      [user] = await tx.update(users).set({ emailVerifiedAt: null }).where(eq(users.id, user.id)).returning();
    }
    if (await memberRow(tx, acting.accountId, user!.id)) throw invalidFields({ email: ["This user is already a member of the account."] });
    await addMember(tx, acting.accountId, user!.id, input.role, input.projectIds, input.viewOnlyProjectIds);
    await audit(tx, acting, "member.invited", `member ${email} (${accessText(input)})`);
    const link = user!.passwordHash ? undefined : await createPasswordLink(tx, user!.id);
    const mailed = !!link && !!opts.mailing;
    if (mailed) await queueMail(tx, { kind: "invitation", userId: user!.id, accountId: acting.accountId, actorUserId: acting.userId });
    return { member: await memberOf(tx, acting.accountId, user!.id), link, mailed };
  });
}

async function ownersOf(db: Db, accountId: number): Promise<number> {
  const [row] = await db.select({ n: sql<number>`count(*)::int` }).from(memberships).where(and(eq(memberships.accountId, accountId), eq(memberships.role, "owner")));
  return row?.n ?? 0;
}

export async function updateMember(db: Db, acting: Acting, userId: number, access: MemberAccess): Promise<Member> {
  const { role, projectIds, viewOnlyProjectIds } = access;
  const actor = await requireManager(db, acting);
  const current = await memberRow(db, acting.accountId, userId);
  if (!current) throw notFound("No such member.");
  checkRoleChange(actor, current.role, role);
  return inTransaction(db, async (tx) => {
    if (current.role === "owner" && role !== "owner" && (await ownersOf(tx, acting.accountId)) <= 1) throw precondition("The account's last owner stays an owner.");
    await addMember(tx, acting.accountId, userId, role, projectIds, viewOnlyProjectIds);
    const member = await memberOf(tx, acting.accountId, userId);
    await audit(tx, acting, "member.updated", `member ${member.user.email} (${accessText(access)})`);
    return member;
  });
}

/** Removes a member: their keys on the account stop resolving (a key needs its user's membership). */
export async function removeMember(db: Db, acting: Acting, userId: number): Promise<void> {
  const actor = await requireManager(db, acting);
  const current = await memberRow(db, acting.accountId, userId);
  if (!current) throw notFound("No such member.");
  checkRoleChange(actor, current.role, undefined);
  await inTransaction(db, async (tx) => {
    if (current.role === "owner" && (await ownersOf(tx, acting.accountId)) <= 1) throw precondition("The account's last owner cannot be removed.");
    await tx.delete(memberships).where(and(eq(memberships.accountId, acting.accountId), eq(memberships.userId, userId)));
    // The dashboard's selection of an account the user left is cleared.
    await tx.update(users).set({ currentAccountId: null, currentProjectId: null, updatedAt: new Date() }).where(and(eq(users.id, userId), eq(users.currentAccountId, acting.accountId)));
    const user = await getUser(tx, userId);
    await audit(tx, acting, "member.removed", `member ${user.email}`);
  });
}

// ---- audit ----

/** Actions other services record; the rest are this service's own. */
const RECORDED_ELSEWHERE = /^endpoint\.[a-z_]{1,40}$/;

/** A change another service made (a webhook endpoint's), by a member of the account. */
export async function recordAuditEvent(db: Db, acting: Acting, action: string, subject: string): Promise<void> {
  if (!RECORDED_ELSEWHERE.test(action)) throw invalidFields({ action: ["action must be endpoint.<verb>."] });
  if (subject.length === 0 || subject.length > 500) throw invalidFields({ subject: ["subject must be 1 to 500 characters."] });
  await membershipOf(db, acting);
  await audit(db, acting, action, subject);
}

export async function listAuditEvents(db: Db, acting: Acting, limit: number) {
  await requireManager(db, acting);
  const n = limit === 0 ? 100 : limit;
  if (!Number.isInteger(n) || n < 1 || n > 200) throw invalidFields({ limit: ["The limit must be from 1 to 200."] });
  return db
    .select({ event: auditEvents, actor: users })
    .from(auditEvents)
    .innerJoin(users, eq(users.id, auditEvents.actorUserId))
    .where(eq(auditEvents.accountId, acting.accountId))
    .orderBy(desc(auditEvents.id))
    .limit(n);
}

/** last_used_at is kept to the minute. */
const KEY_USE_PRECISION_MS = 60_000;

/** Whether a key's last use, as read, is older than last_used_at's precision (or never noted). */
export const keyUseIsStale = (lastUsedAt: Date | null | undefined) => !lastUsedAt || Date.now() - lastUsedAt.getTime() >= KEY_USE_PRECISION_MS;

/** Records that a key was used (for last_used_at), at most once a minute per key. */
export async function noteKeyUse(db: Db, keyId: number): Promise<void> {
  await db
    .update(apiKeys)
    .set({ lastUsedAt: sql`now()` })
    .where(and(eq(apiKeys.id, keyId), sql`(${apiKeys.lastUsedAt} is null or ${apiKeys.lastUsedAt} < now() - interval '1 minute')`));
}

