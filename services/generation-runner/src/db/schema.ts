// Tables of the generation-runner context, in its own Postgres schema.
import { sql } from "drizzle-orm";
import { bigint, boolean, customType, integer, jsonb, numeric, pgSchema, primaryKey, text, timestamp } from "drizzle-orm/pg-core";

export const generationRunnerSchema = pgSchema("generation_runner");

const createdAt = () => timestamp("created_at", { withTimezone: true }).notNull().defaultNow();
const updatedAt = () => timestamp("updated_at", { withTimezone: true }).notNull().defaultNow();
// USD amounts and prices: exact decimals, read and written as strings.
const usd = (name: string) => numeric(name, { precision: 20, scale: 12 });
const bytea = customType<{ data: Buffer }>({ dataType: () => "bytea" });

/**
 * The model catalog: which provider:model ids articles may use, their prices and fallbacks, and
 * the provider's rate limits as the operator set them (null: not configured, the runner learns
 * them from the provider's x-ratelimit headers).
 */
export const models = generationRunnerSchema.table("models", {
  id: text("id").primaryKey(),
  active: boolean("active").notNull().default(true),
  supportsBatch: boolean("supports_batch").notNull().default(false),
  inputPricePerMillion: usd("input_price_per_million").notNull(),
  outputPricePerMillion: usd("output_price_per_million").notNull(),
  fallbackModel: text("fallback_model"),
  requestsPerMinute: integer("requests_per_minute"),
  // Up to 10,000,000,000: past int4, still exact as a JS number.
  tokensPerMinute: bigint("tokens_per_minute", { mode: "number" }),
  maxConcurrentCalls: integer("max_concurrent_calls"),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

/** One article's run: what it was pinned to and how far its finishing work got. */
export const runs = generationRunnerSchema.table("runs", {
  externalId: text("external_id").primaryKey(),
  workflowId: bigint("workflow_id", { mode: "number" }).notNull(),
  workflowRevision: integer("workflow_revision").notNull(),
  articleType: text("article_type").notNull(),
  requestedModel: text("requested_model").notNull(),
  pickups: integer("pickups").notNull().default(1),
  lastError: text("last_error"),
  /** The provider batch holding the article's single step (batch mode). */
  batchId: text("batch_id"),
  batchPolls: integer("batch_polls").notNull().default(0),
  humanizedVersionId: bigint("humanized_version_id", { mode: "number" }),
  webhookEnqueuedAt: timestamp("webhook_enqueued_at", { withTimezone: true }),
  /** Images left out after the job's last attempt, with why: [{ position, reason }]. */
  omittedImages: jsonb("omitted_images").$type<{ position: number; reason: string }[]>().notNull().default([]),
  finishedAt: timestamp("finished_at", { withTimezone: true }),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

/**
 * The checkpoint of one finished step. Written before the run moves on, so a retried job or a
 * restarted worker reuses it and never calls or bills the model for that step again.
 */
export const stepCheckpoints = generationRunnerSchema.table(
  "step_checkpoints",
  {
    externalId: text("external_id").notNull(),
    stepNumber: integer("step_number").notNull(),
    stepName: text("step_name").notNull(),
    model: text("model").notNull(),
    usedFallback: boolean("used_fallback").notNull().default(false),
    batched: boolean("batched").notNull().default(false),
    promptTokens: integer("prompt_tokens").notNull(),
    completionTokens: integer("completion_tokens").notNull(),
    cost: usd("cost").notNull(),
    output: text("output").notNull(),
    // How long the step's model call waited for its provider: its turn in the provider's budget,
    // a rate limit's pause, an outage. 0 for a batched step and for rows stored before this was.
    waitedMs: integer("waited_ms").notNull().default(0),
    completedAt: timestamp("completed_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.externalId, t.stepNumber] })],
);

/**
 * When each step of a run was started and how often: recorded as a step starts, so a retry (or
 * a worker that died mid-call) counts, and the cost breakdown can show attempts and start times.
 */
export const stepAttempts = generationRunnerSchema.table(
  "step_attempts",
  {
    externalId: text("external_id").notNull(),
    stepNumber: integer("step_number").notNull(),
    stepName: text("step_name").notNull(),
    attempts: integer("attempts").notNull().default(1),
    firstStartedAt: timestamp("first_started_at", { withTimezone: true }).notNull().defaultNow(),
    lastStartedAt: timestamp("last_started_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.externalId, t.stepNumber] })],
);

/** Checkpoints of the work after the steps (e.g. "humanize"), billed like steps. */
export const finishingCheckpoints = generationRunnerSchema.table(
  "finishing_checkpoints",
  {
    externalId: text("external_id").notNull(),
    task: text("task").notNull(),
    model: text("model").notNull(),
    promptTokens: integer("prompt_tokens").notNull(),
    completionTokens: integer("completion_tokens").notNull(),
    cost: usd("cost").notNull(),
    output: text("output").notNull(),
    // How long the task's model call waited for its provider, as for a step.
    waitedMs: integer("waited_ms").notNull().default(0),
    completedAt: timestamp("completed_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.externalId, t.task] })],
);

/**
 * Images generated for an article while polishing; each row is its own checkpoint, written once
 * the image's bytes are in the image store. image_id is the unguessable public id of its URL.
 */
export const articleImages = generationRunnerSchema.table(
  "article_images",
  {
    externalId: text("external_id").notNull(),
    position: integer("position").notNull(),
    imageId: text("image_id").notNull().unique(),
    model: text("model").notNull(),
    size: text("size").notNull(),
    prompt: text("prompt").notNull(),
    alt: text("alt").notNull(),
    aspectRatio: text("aspect_ratio").notNull(),
    mediaType: text("media_type").notNull(),
    width: integer("width").notNull(),
    height: integer("height").notNull(),
    byteSize: integer("byte_size").notNull(),
    sha256: text("sha256").notNull(),
    /** Where the bytes are: "postgres" (image_bytes) or "s3" (the configured bucket). */
    storage: text("storage", { enum: ["postgres", "s3"] }).notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.externalId, t.position] })],
);

/** The embedded image store: image bytes by public id, used when no S3-compatible store is configured. */
export const imageBytes = generationRunnerSchema.table("image_bytes", {
  imageId: text("image_id").primaryKey(),
  data: bytea("data").notNull(),
  createdAt: createdAt(),
});

/** The research a run gathered (once per article), so retries reuse the same sources. */
export const researchCheckpoints = generationRunnerSchema.table("research_checkpoints", {
  externalId: text("external_id").primaryKey(),
  query: text("query").notNull(),
  /** The numbered sources with their extracted text. */
  sources: jsonb("sources").notNull(),
  /** Searchers' questions, passed on to the FAQ guidance. */
  questions: jsonb("questions").notNull().default(sql`'[]'::jsonb`),
  createdAt: createdAt(),
});
