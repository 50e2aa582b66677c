// Articles: creation (with its outbox entry, in one transaction), lookup and changes.
import { eq, sql, type SQL } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { preparedPerDatabase } from "../../../kit/src/prepared-statements.ts";
import { articles, type ArticleStatus, type GenerationSettings } from "../db/schema.ts";
import { articleStatement, type ArticleRecord } from "../db/article-rows.ts";
import { conflict, invalidFields, notFound, throwIfAny } from "../../../kit/src/errors.ts";
import { articleIdentifier, isUuid } from "../../../kit/src/rules/identifiers.ts";
import { bindArticleToKey, lockLiveKey, type IdempotencyRequest } from "./idempotency.ts";
import { INITIAL_STATUSES, type InitialStatus } from "../../../kit/src/rules/article-statuses.ts";

export type { ArticleRecord } from "../db/article-rows.ts";

/** An article's status right after creation: anything else would skip generation. */

export interface NewArticle {
  externalId: string;
  accountId: number;
  projectId: number;
  title: string;
  articleType: string;
  targetKeyword: string | null;
  keywords: string[];
  targetWordCount: number;
  tone: string;
  pointOfView: string;
  language: string;
  countryTargeting: string | null;
  humanize: boolean;
  additionalContext: string | null;
  webhookUrl: string | null;
  status: InitialStatus;
  settings: GenerationSettings;
}

/** Postgres rejects a malformed uuid with an error; an unknown identifier is simply not found. */
export function requireUuid(externalId: string, what = "article"): string {
  if (!isUuid(externalId)) throw notFound(`No such ${what}.`);
  return externalId.toLowerCase();
}

function checkNewArticle(input: NewArticle): void {
  const errors: Record<string, string[]> = {};
  if (!isUuid(input.externalId)) errors.external_id = ["external_id must be a UUID."];
  if (!(input.accountId > 0)) errors.account_id = ["account_id is required."];
  if (!(input.projectId > 0)) errors.project_id = ["project_id is required."];
  if (input.title.trim() === "") errors.title = ["title is required."];
  if (input.articleType.trim() === "") errors.article_type = ["article_type is required."];
  if (!(input.targetWordCount > 0)) errors.target_word_count = ["target_word_count must be positive."];
  if (!INITIAL_STATUSES.includes(input.status)) errors.status = [`An article starts as ${INITIAL_STATUSES.join(" or ")}.`];
  throwIfAny(errors);
}

export interface CreatedArticle {
  article: ArticleRecord;
  /** True when an earlier request (same idempotency key or external_id) created it. */
  replayed: boolean;
}

// The article and its generation outbox entry in one statement (one round trip, committed as one
// transaction when it runs alone): nothing is stored when external_id is taken.
const insertArticleWithOutboxEntry = articleStatement(`
  with created as (
    insert into article_store.articles (external_id, account_id, project_id, title, article_type, target_keyword, keywords,
      target_word_count, tone, point_of_view, language, country_targeting, humanize, additional_context, webhook_url, status, settings)
    values ($1::uuid, $2::int8, $3::int8, $4::text, $5::text, $6::text, $7::text[],
      $8::int4, $9::text, $10::text, $11::text, $12::text, $13::bool, $14::text, $15::text, $16::text, $17::jsonb)
    on conflict (external_id) do nothing
    returning *
  ), entry as (
    insert into article_store.outbox (article_id, external_id, queue) select id, external_id, 'generation' from created
  )
  select * from created`);

const insertArticle = (db: Db, input: NewArticle, externalId: string) =>
  insertArticleWithOutboxEntry(db, [
    externalId,
    input.accountId,
    input.projectId,
    input.title,
    input.articleType,
    input.targetKeyword,
    articles.keywords.mapToDriverValue(input.keywords),
    input.targetWordCount,
    input.tone,
    input.pointOfView,
    input.language,
    input.countryTargeting,
    input.humanize,
    input.additionalContext,
    input.webhookUrl,
    input.status,
    articles.settings.mapToDriverValue(input.settings),
  ]);

/**
 * Stores the article and its generation outbox entry in one transaction. Idempotent by
 * external_id; with an idempotency key, the key's first response is returned on reuse.
 */
export async function createArticle(db: Db, input: NewArticle, idempotency?: IdempotencyRequest): Promise<CreatedArticle> {
  checkNewArticle(input);
  const externalId = input.externalId.toLowerCase();
  // Without a key the one statement is the whole transaction.
  if (!idempotency) return createdOrExisting(db, input, externalId, await insertArticle(db, input, externalId));
  return db.transaction(async (t) => {
    const tx = t as unknown as Db;
    const key = await lockLiveKey(tx, input.accountId, idempotency, externalId);
    if (key.firstResponse) return { article: key.firstResponse, replayed: true };
    if (key.externalId !== externalId) throw conflict("This Idempotency-Key is in use by another request.");
    const created = await createdOrExisting(tx, input, externalId, await insertArticle(tx, input, externalId));
    if (!created.replayed) await bindArticleToKey(tx, input.accountId, idempotency.key, created.article);
    return created;
  });
}

/** The new article, or the one an earlier request of the same account created with this external_id. */
async function createdOrExisting(db: Db, input: NewArticle, externalId: string, [created]: ArticleRecord[]): Promise<CreatedArticle> {
  if (created) return { article: created, replayed: false };
  const [existing] = await db.select().from(articles).where(eq(articles.externalId, externalId));
  if (existing.accountId !== input.accountId) throw conflict("external_id is taken.");
  return { article: existing, replayed: true };
}

// Polling reads: prepared once, so a call only binds the identifier.
const lookups = preparedPerDatabase((db: Db) => ({
  byId: db.select().from(articles).where(eq(articles.id, sql.placeholder("id"))).prepare("article_by_id"),
  byExternalId: db.select().from(articles).where(eq(articles.externalId, sql.placeholder("externalId"))).prepare("article_by_external_id"),
  // Batch reads bind their identifiers as one array, so each is prepared once for any number.
  byIds: db.select().from(articles).where(sql`${articles.id} = any(${sql.placeholder("ids")}::int8[])`).prepare("articles_by_ids"),
  byExternalIds: db.select().from(articles).where(sql`${articles.externalId} = any(${sql.placeholder("externalIds")}::uuid[])`).prepare("articles_by_external_ids"),
}));

/** The most articles one batch read returns (a list page's largest size). */
export const MAX_BATCH_READ = 100;

/** The articles with these ids that exist, in no particular order. */
export async function getArticles(db: Db, ids: number[]): Promise<ArticleRecord[]> {
  if (ids.length > MAX_BATCH_READ) throw invalidFields({ ids: [`at most ${MAX_BATCH_READ} ids at once.`] });
  if (ids.length === 0) return [];
  return lookups(db).byIds.execute({ ids: [...new Set(ids)] });
}

/** The most articles one batch read by external_id returns (webhook-dispatcher's deliveries in flight). */
export const MAX_EXTERNAL_IDS = 500;

/** The articles with these external_ids; unknown ones, and ones that are not UUIDs, are left out. */
export async function getArticlesByExternalId(db: Db, externalIds: readonly string[]): Promise<ArticleRecord[]> {
  if (externalIds.length > MAX_EXTERNAL_IDS) throw invalidFields({ external_ids: [`At most ${MAX_EXTERNAL_IDS} identifiers per call.`] });
  const wanted = [...new Set(externalIds.filter(isUuid).map((id) => id.toLowerCase()))];
  return wanted.length === 0 ? [] : lookups(db).byExternalIds.execute({ externalIds: wanted });
}

/** By numeric id or external_id UUID; anything else is not found. */
/** By numeric id (leading zeros allowed) or external_id, as the public API reads an article's identifier. */
export async function getArticle(db: Db, identifier: string): Promise<ArticleRecord> {
  const parsed = articleIdentifier(identifier.trim());
  if (!parsed) throw notFound("No such article.");
  const found = "id" in parsed ? await lookups(db).byId.execute({ id: parsed.id }) : await lookups(db).byExternalId.execute({ externalId: parsed.externalId });
  if (!found[0]) throw notFound("No such article.");
  return found[0];
}

export async function getArticleByExternalId(db: Db, externalId: string): Promise<ArticleRecord> {
  const [article] = await lookups(db).byExternalId.execute({ externalId: requireUuid(externalId) });
  if (!article) throw notFound("No such article.");
  return article;
}

/** Locks one article (by external_id) for a change made in the same transaction. */
export async function lockArticle(tx: Db, externalId: string): Promise<ArticleRecord> {
  const [article] = await tx
    .select()
    .from(articles)
    .where(eq(articles.externalId, requireUuid(externalId)))
    .for("update");
  if (!article) throw notFound("No such article.");
  return article;
}

/** New values of some columns; SQL for values the database computes (e.g. now()). */
export type ArticleChange = { [K in keyof ArticleRecord]?: ArticleRecord[K] | SQL };

/** Applies a change to a locked article and advances updated_at. */
export async function updateArticle(tx: Db, id: number, change: ArticleChange): Promise<ArticleRecord> {
  const [updated] = await tx
    .update(articles)
    .set({ ...change, updatedAt: sql`now()` })
    .where(eq(articles.id, id))
    .returning();
  return updated;
}
