// Many delivery attempts recorded in one transaction (webhook-dispatcher's batches), each with the
// rules of recordDeliveryAttempt, then of markPublished or markDeliveryFailed when it ends its
// delivery. Every record is judged on the locked articles before anything is written, so one that
// cannot be made changes nothing and fails no other; the writes are then two statements,
// whatever the number of records.
import { sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { articles, articleVersions, deliveryAttempts } from "../db/schema.ts";
import { DomainError, invalidFields, notFound, precondition } from "../../../kit/src/errors.ts";
import type { ArticleRecord } from "./articles.ts";
import { isUuid } from "../../../kit/src/rules/identifiers.ts";
import { checkAttempt, type DeliveryAttempt } from "./delivery-attempts.ts";
import { isDone, refuseFailed } from "./lifecycle.ts";

export const MAX_DELIVERY_RECORDS = 500;

/** How a delivery ended with this attempt: published with the attempt's version, or given up. */
export type DeliveryEnding = { kind: "published" } | { kind: "delivery-failed"; reason: string };

export interface DeliveryRecord {
  externalId: string;
  /** Required: a record without one is refused. */
  attempt: DeliveryAttempt | undefined;
  ending?: DeliveryEnding;
}

type CheckedRecord = DeliveryRecord & { attempt: DeliveryAttempt };

/**
 * What recording reads of an article: what judging a record needs, and what the announcements of
 * its change and end carry (changed-articles.ts). Not the content or settings: nothing here reads
 * them, and the whole rows were read under the lock and turned into messages for nothing.
 */
export type DeliveredArticle = Pick<
  ArticleRecord,
  "id" | "externalId" | "projectId" | "status" | "failureReason" | "cost" | "publishedVersionId" | "deliveryFailedAt" | "deliveryFailureReason" | "updatedAt"
>;

const deliveredColumns = {
  id: articles.id,
  externalId: articles.externalId,
  projectId: articles.projectId,
  status: articles.status,
  failureReason: articles.failureReason,
  cost: articles.cost,
  publishedVersionId: articles.publishedVersionId,
  deliveryFailedAt: articles.deliveryFailedAt,
  deliveryFailureReason: articles.deliveryFailureReason,
  updatedAt: articles.updatedAt,
};

export interface RecordedDeliveries {
  /** Per record, in order: undefined when it was made, else why not. */
  errors: (DomainError | undefined)[];
  /** The articles marked published, once each, as they are after the transaction. */
  published: DeliveredArticle[];
  /** The articles whose delivery was marked failed, once each, as they are after it. */
  deliveryFailed: DeliveredArticle[];
}

/** The record's own shape, before any article is read (recordDeliveryAttempt's and markDeliveryFailed's checks). */
function checkRecord(record: DeliveryRecord): CheckedRecord {
  if (!record.attempt) throw invalidFields({ attempt: ["attempt is required."] });
  checkAttempt(record.attempt);
  if (!isUuid(record.externalId)) throw notFound("No such article.");
  if (record.ending?.kind === "delivery-failed" && record.ending.reason.trim() === "") throw invalidFields({ reason: ["reason is required."] });
  return record as CheckedRecord;
}

// Stands for the transaction's now() until the write sets it.
const NEWLY_FAILED = new Date(0);

/** The article as the record leaves it (the same object when unchanged); throws why it cannot be made. */
function judge(record: CheckedRecord, article: DeliveredArticle | undefined, articleOfVersion: Map<number, number>): DeliveredArticle {
  if (!article) throw notFound("No such article.");
  refuseFailed(article);
  const ending = record.ending;
  if (ending?.kind === "published") {
    if (!isDone(article.status)) throw precondition(`The article is ${article.status}; it can be published once completed.`);
    const versionId = record.attempt.versionId;
    if (articleOfVersion.get(versionId) !== article.id) throw notFound("No such version of this article.");
    if (article.status === "published" && article.publishedVersionId === versionId) return article;
    return { ...article, status: "published", publishedVersionId: versionId };
  }
  if (ending?.kind === "delivery-failed") {
    if (article.deliveryFailedAt && article.deliveryFailureReason === ending.reason) return article;
    return { ...article, deliveryFailedAt: article.deliveryFailedAt ?? NEWLY_FAILED, deliveryFailureReason: ending.reason };
  }
  return article;
}

/** `work`'s value, or the domain's refusal of it as one record's answer. */
function refusable<T>(work: () => T): { value?: T; error?: DomainError } {
  try {
    return { value: work() };
  } catch (error) {
    if (error instanceof DomainError) return { error };
    throw error;
  }
}

export async function recordDeliveries(db: Db, records: readonly DeliveryRecord[]): Promise<RecordedDeliveries> {
  if (records.length > MAX_DELIVERY_RECORDS) throw invalidFields({ records: [`At most ${MAX_DELIVERY_RECORDS} records per call.`] });
  const checks = records.map((record) => refusable(() => checkRecord(record)));
  const errors = checks.map((c) => c.error);
  const toRecord = checks.flatMap((c) => (c.value ? [c.value] : []));
  if (toRecord.length === 0) return { errors, published: [], deliveryFailed: [] };

  return db.transaction(async (t) => {
    const tx = t as unknown as Db;
    const externalIds = [...new Set(toRecord.map((r) => r.externalId.toLowerCase()))];
    // Locked in id order, so two batches sharing articles cannot deadlock. Lists travel as one
    // parameter each, so every statement here has the same text whatever the batch.
    const locked = await tx
      .select(deliveredColumns)
      .from(articles)
      .where(sql`${articles.externalId} = any(${sql.param(externalIds)}::uuid[])`)
      .orderBy(articles.id)
      .for("update");
    const current = new Map(locked.map((a) => [a.externalId, a]));
    const versionIds = [...new Set(toRecord.flatMap((r) => (r.ending?.kind === "published" ? [r.attempt.versionId] : [])))];
    const articleOfVersion = new Map<number, number>();
    if (versionIds.length > 0) {
      const versions = await tx
        .select({ id: articleVersions.id, articleId: articleVersions.articleId })
        .from(articleVersions)
        .where(sql`${articleVersions.id} = any(${sql.param(versionIds)}::bigint[])`);
      for (const v of versions) articleOfVersion.set(v.id, v.articleId);
    }

    // In order, each on the article as the records before it left it, as separate calls would.
    const attempts: (DeliveryAttempt & { articleId: number })[] = [];
    const changed = new Map<number, DeliveredArticle>();
    const published = new Set<number>();
    const deliveryFailed = new Set<number>();
    checks.forEach(({ value: record }, i) => {
      if (!record) return;
      errors[i] = refusable(() => {
        const key = record.externalId.toLowerCase();
        const before = current.get(key);
        const after = judge(record, before, articleOfVersion);
        attempts.push({ ...record.attempt, articleId: after.id });
        if (after !== before) current.set(key, after), changed.set(after.id, after);
        if (record.ending?.kind === "published") published.add(after.id);
        if (record.ending?.kind === "delivery-failed") deliveryFailed.add(after.id);
      }).error;
    });

    await insertAttempts(tx, attempts);
    const after = new Map(locked.map((a) => [a.id, a]));
    for (const written of await writeChanges(tx, [...changed.values()])) after.set(written.id, { ...after.get(written.id)!, ...written });
    return { errors, published: [...published].map((id) => after.get(id)!), deliveryFailed: [...deliveryFailed].map((id) => after.get(id)!) };
  });
}

/** The attempts in one INSERT; one already recorded (same delivery and attempt) adds nothing. */
async function insertAttempts(tx: Db, attempts: (DeliveryAttempt & { articleId: number })[]): Promise<void> {
  if (attempts.length === 0) return;
  // The rows travel as one JSON parameter (see writeChanges).
  const rows = attempts.map((a) => ({
    article_id: a.articleId,
    delivery_id: a.deliveryId,
    attempt: a.attempt,
    attempted_at: a.attemptedAt.toISOString(),
    status_code: a.statusCode,
    error: a.error,
    duration_ms: a.durationMs,
    succeeded: a.succeeded,
    version_id: a.versionId,
  }));
  await tx.execute(sql`
    insert into ${deliveryAttempts} (article_id, delivery_id, attempt, attempted_at, status_code, error, duration_ms, succeeded, version_id)
    select * from json_to_recordset(${JSON.stringify(rows)}::json)
      as a(article_id bigint, delivery_id text, attempt integer, attempted_at timestamptz, status_code integer, error text, duration_ms integer, succeeded boolean, version_id bigint)
    on conflict (article_id, delivery_id, attempt) do nothing`);
}

/** One UPDATE for every changed article: the statuses and delivery marks judged above; answers the changed columns. */
async function writeChanges(tx: Db, changed: DeliveredArticle[]) {
  if (changed.length === 0) return [];
  // The new values travel as one JSON parameter, so the statement's text is the same for any batch
  // (postgres.js cannot bind a boolean[] without help, and a text per batch size is a plan per size).
  const values = changed.map((a) => ({
    id: a.id,
    status: a.status,
    published_version_id: a.publishedVersionId,
    newly_failed: a.deliveryFailedAt === NEWLY_FAILED,
    delivery_failure_reason: a.deliveryFailureReason,
  }));
  return tx
    .update(articles)
    .set({
      status: sql`v.status`,
      publishedVersionId: sql`v.published_version_id`,
      deliveryFailedAt: sql`case when v.newly_failed then now() else ${articles.deliveryFailedAt} end`,
      deliveryFailureReason: sql`v.delivery_failure_reason`,
      updatedAt: sql`now()`,
    })
    .from(sql`json_to_recordset(${JSON.stringify(values)}::json) as v(id bigint, status text, published_version_id bigint, newly_failed boolean, delivery_failure_reason text)`)
    .where(sql`${articles.id} = v.id`)
    .returning({
      id: articles.id,
      status: articles.status,
      publishedVersionId: articles.publishedVersionId,
      deliveryFailedAt: articles.deliveryFailedAt,
      deliveryFailureReason: articles.deliveryFailureReason,
      updatedAt: articles.updatedAt,
    });
}
