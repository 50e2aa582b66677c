// Dashboard sign-in: passwords (argon2id through Bun.password), one-time links that set them, and
// server-side sessions. Session and link tokens are random secrets, so a plain SHA-256 is a safe
// lookup hash (api-keys.ts); passwords are not, so they get argon2id. Every refusal of a sign-in
// reads the same, whatever was wrong, so the answer tells nobody which addresses have accounts.
import { randomBytes } from "node:crypto";
import { and, eq, gt, isNull, ne, sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { passwordLinks, sessions, users } from "../db/schema.ts";
import { invalidFields, notFound, unauthenticated } from "../../../kit/src/errors.ts";
import { hashToken } from "./api-keys.ts";
import type { UserRow } from "./identity.ts";
import { queueMail } from "./mail-outbox.ts";

/** A session ends after this long without a request. */
export const SESSION_IDLE_MS = 8 * 3600_000;
/** A session ends this long after sign-in, whatever its activity. */
export const SESSION_ABSOLUTE_MS = 7 * 86400_000;
/** Activity is written at most this often per session (the idle limit is kept to the minute). */
const ACTIVITY_WRITE_MS = 60_000;
/** A one-time link works this long. */
export const LINK_LIFETIME_MS = 72 * 3600_000;
/** A link mailed because someone asked to reset the password works this long: whoever asked waits for it. */
export const RESET_LINK_LIFETIME_MS = 3600_000;

export const PASSWORD_MIN = 10;
export const PASSWORD_MAX = 200;

const SIGN_IN_REFUSED = "These credentials do not match our records.";
const LINK_REFUSED = "This link is not valid any more: ask for a new one.";

// A hash verified when the address is unknown, so that answer takes as long as a wrong password's.
let decoyHash: Promise<string> | undefined;
const decoy = () => (decoyHash ??= Bun.password.hash(randomBytes(16).toString("hex"), { algorithm: "argon2id" }));

const secretToken = () => randomBytes(32).toString("base64url");

function checkPassword(password: string, field = "password"): void {
  const length = [...password].length;
  if (length < PASSWORD_MIN || length > PASSWORD_MAX) throw invalidFields({ [field]: [`The ${field.replace("_", " ")} must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters.`] });
}

export interface StartedSession {
  token: string;
  user: UserRow;
  expiresAt: Date;
}

/** A new session for the user; its token is returned this once. */
async function startSession(db: Db, user: UserRow, now = new Date()): Promise<StartedSession> {
  const token = secretToken();
  const expiresAt = new Date(now.getTime() + SESSION_ABSOLUTE_MS);
  await db.insert(sessions).values({ userId: user.id, tokenHash: hashToken(token), createdAt: now, lastSeenAt: now, expiresAt });
  return { token, user, expiresAt };
}

export async function signIn(db: Db, email: string, password: string): Promise<StartedSession> {
  const [user] = await db.select().from(users).where(eq(users.email, email.trim().toLowerCase()));
  const valid = await Bun.password.verify(password, user?.passwordHash ?? (await decoy())).catch(() => false);
  if (!user || !user.passwordHash || !valid || user.disabledAt) throw unauthenticated(SIGN_IN_REFUSED);
  return startSession(db, user);
}

/** The session's user; refused once the session ended, idled out or passed its absolute limit. */
export async function authenticateSession(db: Db, token: string, now = new Date()): Promise<{ sessionId: number; user: UserRow; expiresAt: Date }> {
  const [row] = await db
    .select({ session: sessions, user: users })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(and(eq(sessions.tokenHash, hashToken(token)), isNull(sessions.endedAt), gt(sessions.expiresAt, now)));
  if (!row || row.user.disabledAt || now.getTime() - row.session.lastSeenAt.getTime() > SESSION_IDLE_MS) throw unauthenticated();
  if (now.getTime() - row.session.lastSeenAt.getTime() > ACTIVITY_WRITE_MS) {
    await db.update(sessions).set({ lastSeenAt: now }).where(eq(sessions.id, row.session.id));
  }
  return { sessionId: row.session.id, user: row.user, expiresAt: row.session.expiresAt };
}

export async function endSession(db: Db, token: string): Promise<void> {
  await db.update(sessions).set({ endedAt: sql`coalesce(${sessions.endedAt}, now())` }).where(eq(sessions.tokenHash, hashToken(token)));
}

/** Ends every live session of the user but `keepId`'s; how many ended. */
async function endOtherSessions(db: Db, userId: number, keepId?: number): Promise<number> {
  const ended = await db
    .update(sessions)
    .set({ endedAt: new Date() })
    .where(and(eq(sessions.userId, userId), isNull(sessions.endedAt), keepId === undefined ? undefined : ne(sessions.id, keepId)))
    .returning({ id: sessions.id });
  return ended.length;
}

export async function changePassword(db: Db, sessionToken: string, currentPassword: string, newPassword: string): Promise<number> {
  const { sessionId, user } = await authenticateSession(db, sessionToken);
  const [row] = await db.select({ hash: users.passwordHash }).from(users).where(eq(users.id, user.id));
  if (!row?.hash || !(await Bun.password.verify(currentPassword, row.hash).catch(() => false))) {
    throw invalidFields({ current_password: ["The current password is not correct."] });
  }
  checkPassword(newPassword, "new_password");
  const hash = await Bun.password.hash(newPassword, { algorithm: "argon2id" });
  return db.transaction(async (t) => {
    const tx = t as unknown as Db;
    await tx.update(users).set({ passwordHash: hash, updatedAt: new Date() }).where(eq(users.id, user.id));
    return endOtherSessions(tx, user.id, sessionId);
  });
}

/** A one-time link for the user to set a password; the token is returned this once. */
export async function createPasswordLink(db: Db, userId: number, now = new Date(), lifetimeMs = LINK_LIFETIME_MS): Promise<{ token: string; expiresAt: Date }> {
  const [user] = await db.select({ id: users.id }).from(users).where(eq(users.id, userId));
  if (!user) throw notFound("No such user.");
  const token = secretToken();
  const expiresAt = new Date(now.getTime() + lifetimeMs);
  await db.insert(passwordLinks).values({ tokenHash: hashToken(token), userId, createdAt: now, expiresAt });
  return { token, expiresAt };
}

/**
 * Uses a link: the password is set, the email counts as verified (the link reached its owner),
 * every earlier session ends and a new one starts, all at once; a link works once, and the
 * user's other links stop working with it (an invitation shown to the inviter and also mailed
 * makes two: once the invitee set a password, the inviter's copy must not set another).
 */
export async function redeemLink(db: Db, linkToken: string, password: string): Promise<StartedSession> {
  checkPassword(password);
  const hash = await Bun.password.hash(password, { algorithm: "argon2id" });
  return db.transaction(async (t) => {
    const tx = t as unknown as Db;
    const now = new Date();
    const [link] = await tx
      .update(passwordLinks)
      .set({ usedAt: now })
      .where(and(eq(passwordLinks.tokenHash, hashToken(linkToken)), isNull(passwordLinks.usedAt), gt(passwordLinks.expiresAt, now)))
      .returning();
    if (!link) throw unauthenticated(LINK_REFUSED);
    const [user] = await tx
      .update(users)
      .set({ passwordHash: hash, emailVerifiedAt: sql`coalesce(${users.emailVerifiedAt}, now())`, updatedAt: now })
      .where(eq(users.id, link.userId))
      .returning();
    if (!user || user.disabledAt) throw unauthenticated(LINK_REFUSED);
    await tx.update(passwordLinks).set({ usedAt: now }).where(and(eq(passwordLinks.userId, user.id), isNull(passwordLinks.usedAt)));
    await endOtherSessions(tx, user.id);
    return startSession(tx, user, now);
  });
}

/**
 * "Forgot password": queues a mail with a reset link for the address's user, if there is one
 * and they are not disabled. The caller learns nothing either way (the gateway answers the same).
 */
export async function requestPasswordReset(db: Db, email: string): Promise<void> {
  const [user] = await db.select({ id: users.id, disabledAt: users.disabledAt }).from(users).where(eq(users.email, email.trim().toLowerCase()));
  if (!user || user.disabledAt) return;
  await queueMail(db, { kind: "password_reset", userId: user.id });
}
