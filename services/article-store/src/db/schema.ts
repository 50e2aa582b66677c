// Tables of the article-store context, in its own Postgres schema.
import type { JsonObject } from "@bufbuild/protobuf";
import { sql, type AnyColumn } from "drizzle-orm";
import type { EndpointEventJob, PublishOptionsRecord } from "../../../kit/src/queues.ts";
import { bigint, bigserial, boolean, date, index, integer, jsonb, numeric, pgSchema, primaryKey, text, timestamp, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { ARTICLE_STATUSES, RUNNING_STATUSES, type ArticleStatus } from "../../../kit/src/rules/article-statuses.ts";

export const articleStoreSchema = pgSchema("article_store");

const id = () => bigserial("id", { mode: "number" }).primaryKey();
const ref = (name: string) => bigint(name, { mode: "number" });
const at = (name: string) => timestamp(name, { withTimezone: true });
// Milliseconds, as the API shows them: lists order by created_at then id, and a sub-millisecond
// difference would order two articles against the ids a client sees beside equal times.
const createdAt = () => at("created_at").notNull().default(sql`date_trunc('milliseconds', now())`);
const updatedAt = () => at("updated_at").notNull().defaultNow();

export { ARTICLE_STATUSES, type ArticleStatus };

/** Everything generation needs, fixed at creation (the pinned workflow, model and options). */
export interface GenerationSettings {
  workflowId: number;
  workflowRevision: number;
  builtinWorkflow: boolean;
  model: string;
  targetAudience: string | null;
  brandVoiceId: number | null;
  includeKeyTakeaways: boolean;
  includeFaq: boolean;
  headingCapitalization: string | null;
  researchEnabled: boolean;
  researchMaxSources: number;
  researchMinContentWords: number;
  researchMaxWordsPerSource: number;
  researchIncludeDomains: string[];
  researchExcludeDomains: string[];
  useBatchApi: boolean;
  additionalInstruction: string | null;
  imageCount: number;
  imageAspectRatio: string | null;
  imagePresetId: number | null;
  reservedWords: number;
  /** Where the article is published when it completes (proto AutoPublish); absent when not asked for. */
  publish?: AutoPublish | null;
  /** How the text cites its sources; absent (stored before citations existed) means "none". */
  citations?: string;
}

export interface AutoPublish {
  destinationId: number;
  /** As the publishing job carries them (kit/queues.ts). */
  options: PublishOptionsRecord;
}

/** One attempt of a publishing job (proto PublicationAttempt). */
export interface PublicationAttempt {
  attempt: number;
  /** ISO 8601. */
  attemptedAt: string;
  outcome: "published" | "retry" | "failed";
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  versionId: number;
}

export const PUBLICATION_STATES = ["queued", "publishing", "published", "failed"] as const;

/** The article's publication to one destination (proto Publication). */
export interface Publication {
  destinationId: number;
  destinationKind: string;
  state: (typeof PUBLICATION_STATES)[number];
  remoteId: string | null;
  remoteUrl: string | null;
  remoteStatus: string | null;
  versionId: number | null;
  error: string | null;
  attempts: PublicationAttempt[];
  /** ISO 8601. */
  requestedAt: string;
  updatedAt: string;
}

/** One page an article's research read, as its text cites it (proto ArticleSource). */
export interface ArticleSource {
  number: number;
  url: string;
  title: string;
  siteName: string;
  /** ISO 8601. */
  fetchedAt: string;
  cited: boolean;
}

/** One image of an article's content (proto ArticleImage). */
export interface ArticleImage {
  position: number;
  imageId: string;
  url: string;
  alt: string;
  width: number;
  height: number;
  aspectRatio: string;
  mediaType: string;
}

export const articles = articleStoreSchema.table(
  "articles",
  {
    id: id(),
    externalId: uuid("external_id").notNull().unique(),
    accountId: ref("account_id").notNull(),
    projectId: ref("project_id").notNull(),
    title: text("title").notNull(),
    description: text("description"),
    content: text("content"),
    originalContent: text("original_content"),
    currentVersionId: ref("current_version_id"),
    publishedVersionId: ref("published_version_id"),
    status: text("status", { enum: ARTICLE_STATUSES }).notNull(),
    articleType: text("article_type").notNull(),
    targetKeyword: text("target_keyword"),
    keywords: text("keywords").array().notNull().default(sql`'{}'::text[]`),
    targetWordCount: integer("target_word_count").notNull(),
    actualWordCount: integer("actual_word_count").notNull().default(0),
    tone: text("tone").notNull(),
    pointOfView: text("point_of_view").notNull(),
    language: text("language").notNull(),
    countryTargeting: text("country_targeting"),
    aiModelUsed: text("ai_model_used"),
    // USD, exact; read and written as a decimal string.
    cost: numeric("cost", { precision: 20, scale: 12 }).notNull().default("0"),
    currentStep: text("current_step"),
    humanize: boolean("humanize").notNull().default(false),
    aiDetectionScore: integer("ai_detection_score"),
    originalityCheckedAt: at("originality_checked_at"),
    additionalContext: text("additional_context"),
    webhookUrl: text("webhook_url"),
    settings: jsonb("settings").$type<GenerationSettings>().notNull(),
    failureReason: text("failure_reason"),
    // The step running when it failed (current_step is cleared then); a retry records it in article_failures.
    failedStep: text("failed_step"),
    deliveryFailedAt: at("delivery_failed_at"),
    deliveryFailureReason: text("delivery_failure_reason"),
    // The images its content shows, set with the generated version (metadata only: the bytes are generation-runner's).
    images: jsonb("images").$type<ArticleImage[]>().notNull().default([]),
    // Its publications to the project's destinations, one per destination (webhook-dispatcher records them).
    publications: jsonb("publications").$type<Publication[]>().notNull().default([]),
    // The pages its research read, numbered as its current version cites them (set with that version).
    sources: jsonb("sources").$type<ArticleSource[]>().notNull().default([]),
    // Citations of unknown numbers the runner removed from the current version.
    citationsRemoved: integer("citations_removed").notNull().default(0),
    // The brief checks of the current version, as the runner measured it; null for an article
    // finished before the checks existed (or not finished yet). Passed through as it came.
    quality: jsonb("quality").$type<JsonObject>(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    // Lists are per project(s), newest first, optionally by status.
    index("articles_project_newest").on(t.projectId, t.createdAt.desc(), t.id.desc()),
    index("articles_project_status_newest").on(t.projectId, t.status, t.createdAt.desc(), t.id.desc()),
    // The reconciler walks only the articles whose work is not done (see unfinishedWork); keyed
    // by id alone, so progress updates (updated_at) keep their HOT updates.
    index("articles_unfinished_work").on(t.id).where(unfinishedWork(t)),
  ],
);

/**
 * Articles some background work still owes something: generation under way (or its hand-offs,
 * shown by the originality check still missing), a completion webhook not yet delivered nor
 * given up, or a published article's current version (an edit) whose check was lost. The
 * reconciler's reads repeat this predicate word for word so they use the index.
 */
export function unfinishedWork(t: { status: AnyColumn; originalityCheckedAt: AnyColumn; webhookUrl: AnyColumn; deliveryFailedAt: AnyColumn }) {
  return sql`(${t.status} in (${sql.raw(RUNNING_STATUSES.map((s) => `'${s}'`).join(", "))}) or (${t.status} = 'completed' and (${t.originalityCheckedAt} is null or (${t.webhookUrl} is not null and ${t.deliveryFailedAt} is null))) or (${t.status} = 'published' and ${t.originalityCheckedAt} is null))`;
}

/**
 * How many articles each project holds per status: a list's total is a sum of a few rows, exact
 * at any size. Triggers on articles record every change in article_count_changes (migration
 * 0003); article-store folds those into these counts, and reads add the ones not folded yet.
 */
export const articleCounts = articleStoreSchema.table(
  "article_counts",
  {
    projectId: ref("project_id").notNull(),
    status: text("status", { enum: ARTICLE_STATUSES }).notNull(),
    articles: bigint("articles", { mode: "number" }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.status] })],
);

/**
 * The same counts per UTC day of creation: a deep page skips whole days by their counts and walks
 * the index only within the day it starts in.
 */
export const articleDayCounts = articleStoreSchema.table(
  "article_day_counts",
  {
    projectId: ref("project_id").notNull(),
    status: text("status", { enum: ARTICLE_STATUSES }).notNull(),
    day: date("day", { mode: "string" }).notNull(),
    articles: bigint("articles", { mode: "number" }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.status, t.day] })],
);

/**
 * Count changes written in the same transaction as the articles they count. Appending (rather
 * than updating a project's count row) keeps concurrent writers of one project from queueing
 * on that row until each other's commit. A row adds `change` articles to `status`; when
 * `moved_from` is set they moved from that status (same project and day), which is also taken
 * off it: a status change is one row, not two (migrations 0007 and 0008).
 */
export const articleCountChanges = articleStoreSchema.table(
  "article_count_changes",
  {
    id: id(),
    projectId: ref("project_id").notNull(),
    status: text("status", { enum: ARTICLE_STATUSES }).notNull(),
    day: date("day", { mode: "string" }).notNull(),
    change: bigint("change", { mode: "number" }).notNull(),
    movedFrom: text("moved_from", { enum: ARTICLE_STATUSES }),
  },
  (t) => [index("article_count_changes_project").on(t.projectId, t.status)],
);

/** The kinds of version a generation run makes, one each per article (a retried job finds its own). */
export const GENERATION_KINDS = ["generated", "humanized"] as const;
/** Kinds of the versions made after generation: a client's edit, a restore of an earlier version. */
export const EDIT_KINDS = ["edited", "restored"] as const;

/**
 * Every body the article has had, numbered from 1 (the generation output) and never changed once
 * written: a humanization pass, an edit or a restore each add one, and the article shows the one
 * its current_version_id names. A version holds what the article showed with it (description,
 * sources, the brief checks), so a restore brings all of it back.
 */
export const articleVersions = articleStoreSchema.table(
  "article_versions",
  {
    id: id(),
    articleId: ref("article_id")
      .notNull()
      .references(() => articles.id),
    number: integer("number").notNull(),
    // "generated" for version 1, "humanized" for the humanization pass; "edited", "restored" after.
    kind: text("kind").notNull(),
    content: text("content").notNull(),
    wordCount: integer("word_count").notNull(),
    aiDetectionScore: integer("ai_detection_score"),
    originalityCheckedAt: at("originality_checked_at"),
    description: text("description"),
    sources: jsonb("sources").$type<ArticleSource[]>().notNull().default([]),
    citationsRemoved: integer("citations_removed").notNull().default(0),
    quality: jsonb("quality").$type<JsonObject>(),
    // Who made it: the API key of an edit or restore, else the workload (the generation run).
    madeByKeyId: ref("made_by_key_id"),
    madeByWorkload: text("made_by_workload"),
    // A restore's source version (its number).
    restoredFrom: integer("restored_from"),
    // A section revision's section, action and instruction.
    revision: jsonb("revision").$type<VersionRevisionNote>(),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("article_versions_number").on(t.articleId, t.number),
    // A run adds each of its kinds once; edits and restores add as many as asked.
    uniqueIndex("article_versions_generation_kind").on(t.articleId, t.kind).where(sql`${t.kind} in ('generated', 'humanized')`),
  ],
);

/**
 * The transactional outbox: written with the article, relayed to the generation queue. A row
 * stays unsent until the job is in the queue, so a crash in between only delays generation.
 */
export const outbox = articleStoreSchema.table(
  "outbox",
  {
    id: id(),
    articleId: ref("article_id")
      .notNull()
      .references(() => articles.id),
    externalId: uuid("external_id").notNull(),
    queue: text("queue", { enum: ["generation"] }).notNull(),
    createdAt: createdAt(),
    sentAt: at("sent_at"),
  },
  (t) => [index("outbox_unsent").on(t.id).where(sql`${t.sentAt} is null`)],
);

/**
 * Idempotency-Key claims of POST /v1/articles, per API key account. A claim holds the
 * external_id its creation uses; once the article exists it also holds the first response.
 */
export const idempotencyKeys = articleStoreSchema.table(
  "idempotency_keys",
  {
    accountId: ref("account_id").notNull(),
    key: text("key").notNull(),
    requestHash: text("request_hash").notNull(),
    externalId: uuid("external_id").notNull(),
    articleId: ref("article_id").references(() => articles.id),
    /** The article as the first request created it, replayed verbatim. */
    firstResponse: jsonb("first_response"),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.key] }), index("idempotency_keys_created").on(t.createdAt)],
);

export const brandVoices = articleStoreSchema.table(
  "brand_voices",
  {
    id: id(),
    projectId: ref("project_id").notNull(),
    name: text("name").notNull(),
    description: text("description").notNull(),
    createdAt: createdAt(),
  },
  (t) => [index("brand_voices_project").on(t.projectId)],
);

export const imagePresets = articleStoreSchema.table(
  "image_presets",
  {
    id: id(),
    projectId: ref("project_id").notNull(),
    name: text("name").notNull(),
    style: text("style").notNull(),
    createdAt: createdAt(),
  },
  (t) => [index("image_presets_project").on(t.projectId)],
);

export const researchSources = articleStoreSchema.table(
  "research_sources",
  {
    articleId: ref("article_id")
      .notNull()
      .references(() => articles.id),
    position: integer("position").notNull(),
    title: text("title").notNull(),
    url: text("url").notNull(),
    wordCount: integer("word_count").notNull(),
    fetchedAt: at("fetched_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.articleId, t.position] })],
);

export const deliveryAttempts = articleStoreSchema.table(
  "delivery_attempts",
  {
    id: id(),
    articleId: ref("article_id")
      .notNull()
      .references(() => articles.id),
    deliveryId: text("delivery_id").notNull(),
    attempt: integer("attempt").notNull(),
    attemptedAt: at("attempted_at").notNull(),
    statusCode: integer("status_code"),
    error: text("error"),
    durationMs: integer("duration_ms").notNull(),
    succeeded: boolean("succeeded").notNull(),
    versionId: ref("version_id").notNull(),
  },
  (t) => [uniqueIndex("delivery_attempts_once").on(t.articleId, t.deliveryId, t.attempt), index("delivery_attempts_article").on(t.articleId, t.attemptedAt)],
);

/**
 * The event logs of ended articles (GET /v1/articles/{id}/events), each entry copied from the
 * article's Redis stream (kit/article-events.ts) with its stream id once the article ended, and
 * every later one as it is written; Redis then lets the stream go. An article's entries are kept
 * a week after its last one (event-archive.ts), as its stream was.
 */
export const articleEvents = articleStoreSchema.table(
  "article_events",
  {
    articleId: ref("article_id")
      .notNull()
      .references(() => articles.id),
    // The stream id <milliseconds>-<sequence> as two numbers, so the log orders and resumes by it.
    streamMs: bigint("stream_ms", { mode: "number" }).notNull(),
    streamSeq: bigint("stream_seq", { mode: "number" }).notNull(),
    event: text("event").notNull(),
    // The JSON text the stream held, so a replay sends the same bytes as the live stream did.
    data: text("data").notNull(),
  },
  // The age index finds the oldest entries for pruning without reading the whole table.
  (t) => [primaryKey({ columns: [t.articleId, t.streamMs, t.streamSeq] }), index("article_events_age").on(t.streamMs)],
);

/**
 * What stays of an erased article (DELETE /v1/articles/{id}), for billing and for answering a
 * repeated delete: no content and not its external_id (only a SHA-256 of it, to recognise it).
 */
export const articleErasures = articleStoreSchema.table(
  "article_erasures",
  {
    // The article's numeric id, as it was.
    articleId: bigint("article_id", { mode: "number" }).primaryKey(),
    externalIdSha256: text("external_id_sha256").notNull().unique(),
    accountId: ref("account_id").notNull(),
    projectId: ref("project_id").notNull(),
    wordsBilled: bigint("words_billed", { mode: "number" }).notNull(),
    erasedByKeyId: ref("erased_by_key_id"),
    erasedAt: at("erased_at").notNull().defaultNow(),
  },
);

/** The earlier failures of a retried article (POST /v1/articles/{id}/retry), oldest first. */
export const articleFailures = articleStoreSchema.table(
  "article_failures",
  {
    articleId: ref("article_id")
      .notNull()
      .references(() => articles.id),
    // 1 for the first run's failure.
    attempt: integer("attempt").notNull(),
    reason: text("reason"),
    step: text("step"),
    failedAt: at("failed_at").notNull(),
    retriedAt: at("retried_at").notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.articleId, t.attempt] })],
);

/**
 * Article events for the projects' webhook endpoints whose hand-over to Redis failed right after
 * their change committed (Redis away): kept here and handed over again by a background pass, so
 * an outage of Redis alone loses none. Empty while Redis answers.
 */
export const endpointEventBacklog = articleStoreSchema.table("endpoint_event_backlog", {
  eventId: text("event_id").primaryKey(),
  event: jsonb("event").$type<EndpointEventJob>().notNull(),
  createdAt: createdAt(),
});

/** What a section revision changed, as its version records it. */
export interface VersionRevisionNote {
  number: number;
  action: string;
  sectionIndex: number;
  sectionHeading: string;
  instruction: string | null;
  language: string | null;
}

/**
 * Section operations on a finished article (POST /v1/articles/{id}/revisions): at most one queued
 * or running per article; its words are reserved under `reference`, its run is the article's
 * generation job, and a completed one names the version it made.
 */
export const sectionRevisions = articleStoreSchema.table(
  "section_revisions",
  {
    articleId: ref("article_id")
      .notNull()
      .references(() => articles.id),
    number: integer("number").notNull(),
    reference: text("reference").notNull().unique(),
    status: text("status", { enum: ["queued", "running", "completed", "failed"] }).notNull().default("queued"),
    action: text("action").notNull(),
    sectionIndex: integer("section_index").notNull(),
    sectionHeading: text("section_heading").notNull(),
    instruction: text("instruction"),
    targetWords: integer("target_words"),
    language: text("language"),
    reservedWords: integer("reserved_words").notNull(),
    keyId: ref("key_id"),
    idempotencyKey: text("idempotency_key"),
    requestHash: text("request_hash"),
    versionId: ref("version_id"),
    writtenWords: integer("written_words"),
    failureReason: text("failure_reason"),
    createdAt: createdAt(),
    finishedAt: at("finished_at"),
  },
  (t) => [
    primaryKey({ columns: [t.articleId, t.number] }),
    // One operation at a time: a second while one is under way is refused.
    uniqueIndex("section_revisions_one_pending").on(t.articleId).where(sql`${t.status} in ('queued', 'running')`),
    uniqueIndex("section_revisions_idempotency_key").on(t.articleId, t.idempotencyKey),
  ],
);

/**
 * Each replica's mark of how far its endpoint hand-overs are complete: every change it committed
 * before `covered_until` has had its endpoint events handed over (or kept in the backlog above).
 * Renewed every few seconds (`seen_at`); a replica gone without removing its mark (killed, its
 * node lost) leaves it stale, and another replica hands over again the events of the changes made
 * since (domain/endpoint-handover-marks.ts).
 */
export const endpointHandoverMarks = articleStoreSchema.table("endpoint_handover_marks", {
  replica: text("replica").primaryKey(),
  coveredUntil: at("covered_until").notNull(),
  seenAt: at("seen_at").notNull().default(sql`now()`),
});
