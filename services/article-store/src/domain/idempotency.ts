// Idempotency-Key of article creation, as Stripe does it: per account, a key lives 24 hours,
// binds one request hash, and once its article exists replays the first response verbatim.
// A claim is taken before any cross-service work so that concurrent identical requests share
// one external_id (the quota reservation's reference too): one article, one reservation.
import { randomUUID } from "node:crypto";
import { and, eq, not, sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { idempotencyKeys } from "../db/schema.ts";
import { conflict, throwIfAny } from "../../../kit/src/errors.ts";
import type { ArticleRecord } from "../db/article-rows.ts";

export const KEY_LIFETIME_HOURS = 24;
const MAX_KEY_LENGTH = 255;

export interface IdempotencyRequest {
  key: string;
  requestHash: string;
}

type KeyRow = typeof idempotencyKeys.$inferSelect;

export interface IdempotencyClaim {
  externalId: string;
  requestHash: string;
  /** The article as the first request created it, once it exists. */
  firstResponse: ArticleRecord | null;
}

const expired = sql`${idempotencyKeys.createdAt} < now() - make_interval(hours => ${KEY_LIFETIME_HOURS})`;

function checkRequest(accountId: number, request: IdempotencyRequest): void {
  const errors: Record<string, string[]> = {};
  if (!(accountId > 0)) errors.account_id = ["account_id is required."];
  if (request.key === "" || request.key.length > MAX_KEY_LENGTH) errors.idempotency_key = [`The idempotency key must be 1 to ${MAX_KEY_LENGTH} characters.`];
  if (request.requestHash === "") errors.request_hash = ["request_hash is required."];
  throwIfAny(errors);
}

const DATE_FIELDS = ["createdAt", "updatedAt", "originalityCheckedAt", "deliveryFailedAt"] as const;

/** The stored first response back as a record (JSON holds its times as strings). */
function reviveArticle(json: unknown): ArticleRecord {
  const record = { ...(json as Record<string, unknown>) };
  for (const field of DATE_FIELDS) if (typeof record[field] === "string") record[field] = new Date(record[field] as string);
  return record as unknown as ArticleRecord;
}

function claimOf(row: KeyRow): IdempotencyClaim {
  return { externalId: row.externalId, requestHash: row.requestHash, firstResponse: row.firstResponse ? reviveArticle(row.firstResponse) : null };
}

const keyOf = (accountId: number, key: string) => and(eq(idempotencyKeys.accountId, accountId), eq(idempotencyKeys.key, key));

function checkedClaim(row: KeyRow, request: IdempotencyRequest): IdempotencyClaim {
  if (row.requestHash !== request.requestHash) {
    throw conflict("This Idempotency-Key was already used with a different request body; use a new key for a different request.");
  }
  return claimOf(row);
}

/**
 * Takes (or joins) the account's claim on the key; inside a transaction the claim stays locked
 * until it ends. An expired claim is started afresh. A claim bound to another request hash is a
 * conflict. One statement claims a new key (or an expired one afresh); a live claim is locked by
 * that same statement without being changed (ON CONFLICT DO UPDATE locks the row its condition
 * passes over) and read by a second, which sees a claim a concurrent request has just committed.
 */
async function claimKey(db: Db, accountId: number, request: IdempotencyRequest, proposedExternalId: string): Promise<IdempotencyClaim> {
  const fresh = { accountId, key: request.key, requestHash: request.requestHash, externalId: proposedExternalId };
  for (let attempt = 1; ; attempt++) {
    let [row] = await db
      .insert(idempotencyKeys)
      .values(fresh)
      .onConflictDoUpdate({
        target: [idempotencyKeys.accountId, idempotencyKeys.key],
        set: { requestHash: fresh.requestHash, externalId: fresh.externalId, articleId: null, firstResponse: null, createdAt: sql`now()` },
        setWhere: expired,
      })
      .returning();
    [row] = row ? [row] : await db.select().from(idempotencyKeys).where(keyOf(accountId, request.key));
    if (row) return checkedClaim(row, request);
    // Outside a transaction the purge may remove an expired claim between the two statements: claim again.
    if (attempt === 3) throw new Error(`idempotency key of account ${accountId}: no claim found after ${attempt} attempts`);
  }
}

/**
 * Locks the account's live claim on the key inside the caller's transaction, in one statement
 * when the creation's request claimed it first (as the gateway does); claims it when there is
 * none, or only an expired one.
 */
export async function lockLiveKey(tx: Db, accountId: number, request: IdempotencyRequest, proposedExternalId: string): Promise<IdempotencyClaim> {
  checkRequest(accountId, request);
  const [live] = await tx
    .select()
    .from(idempotencyKeys)
    .where(and(keyOf(accountId, request.key), not(expired)))
    .for("update");
  return live ? checkedClaim(live, request) : claimKey(tx, accountId, request, proposedExternalId);
}

/** Claims the key (or finds its live claim) before the cross-service work of a creation. */
export async function claimIdempotencyKey(db: Db, accountId: number, request: IdempotencyRequest): Promise<IdempotencyClaim> {
  checkRequest(accountId, request);
  return claimKey(db, accountId, request, randomUUID());
}

/** The live claim on a key, if any (a read only: nothing is claimed). */
export async function findIdempotencyClaim(db: Db, accountId: number, key: string): Promise<IdempotencyClaim | null> {
  if (key === "" || key.length > MAX_KEY_LENGTH) return null;
  const [row] = await db
    .select()
    .from(idempotencyKeys)
    .where(and(keyOf(accountId, key), not(expired)));
  return row ? claimOf(row) : null;
}

/** Records the created article as the key's first response (same transaction as the article). */
export async function bindArticleToKey(tx: Db, accountId: number, key: string, article: ArticleRecord): Promise<void> {
  await tx
    .update(idempotencyKeys)
    .set({ articleId: article.id, firstResponse: article })
    .where(keyOf(accountId, key));
}

/** Forgets keys past their lifetime (their articles stay). */
export async function purgeExpiredKeys(db: Db): Promise<number> {
  const removed = await db.delete(idempotencyKeys).where(expired).returning({ key: idempotencyKeys.key });
  return removed.length;
}
