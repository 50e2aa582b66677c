// The model catalog: provider:model ids, their prices (USD per million tokens), fallbacks and the
// provider rate limits the operator set for them. Article creation resolves the model here; the
// runner prices every call from it and paces its calls by the limits.
import { asc, eq, inArray, or, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import { invalidFields, notFound, precondition, conflict, throwIfAny } from "../../../kit/src/errors.ts";
import type { Db } from "../db/client.ts";
import { preparedPerDatabase } from "../../../kit/src/prepared-statements.ts";
import { models } from "../db/schema.ts";
import { CatalogMemory } from "./catalog-memory.ts";
import { NO_LIMITS } from "../scheduler/index.ts";
import { formatUsd, isUsdDecimal, parseUsd } from "../../../kit/src/rules/usd.ts";

export interface CatalogModel {
  id: string;
  active: boolean;
  supportsBatch: boolean;
  inputPricePerMillion: string;
  outputPricePerMillion: string;
  fallbackModel: string | null;
  /** The provider's rate limits as the operator set them; null: not configured (the runner then
   * learns them from the provider's x-ratelimit headers). */
  requestsPerMinute: number | null;
  tokensPerMinute: number | null;
  maxConcurrentCalls: number | null;
}

/** The bounds of each rate limit (a set limit is a whole number from 1 to these). */
const RATE_LIMIT_MAX = {
  requests_per_minute: 10_000_000,
  tokens_per_minute: 10_000_000_000,
  max_concurrent_calls: 100_000,
} as const;

/** Answers whether this runner can reach the model's provider. */
export type ProviderCheck = (modelId: string) => boolean;

// provider:model; model names may carry dots, slashes or colons (e.g. "meta-llama/Llama-3.1-8B", "llama3:8b").
const MODEL_ID = /^[a-z0-9][a-z0-9_-]{0,49}:[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,199}$/;

/**
 * Seeded on first start, each only when absent, so operator changes survive restarts. The
 * simulated models are active only when the simulator is configured; the real OpenAI model
 * only when a real OpenAI key is.
 */
export function seedModels(opts: { simulator: boolean; openai: boolean }): CatalogModel[] {
  const sim = (id: string, input: string, output: string, extra: Partial<CatalogModel> = {}): CatalogModel => ({
    id: `simulator:${id}`,
    active: opts.simulator,
    supportsBatch: false,
    inputPricePerMillion: input,
    outputPricePerMillion: output,
    fallbackModel: null,
    ...NO_LIMITS,
    ...extra,
  });
  return [
    sim("sim-fast", "0.10", "0.40"),
    sim("sim-pro", "2.50", "10.00", { fallbackModel: "simulator:sim-fast" }),
    sim("sim-batch", "0.50", "2.00", { supportsBatch: true }),
    sim("unavailable-model", "1.00", "4.00", { fallbackModel: "simulator:sim-fast" }),
    {
      id: "openai:gpt-4o-mini",
      active: opts.openai,
      supportsBatch: true,
      inputPricePerMillion: "0.15",
      outputPricePerMillion: "0.60",
      fallbackModel: null,
      ...NO_LIMITS,
    },
  ];
}

type Row = typeof models.$inferSelect;

const present = (r: Row): CatalogModel => ({
  id: r.id,
  active: r.active,
  supportsBatch: r.supportsBatch,
  inputPricePerMillion: formatUsd(parseUsd(r.inputPricePerMillion)),
  outputPricePerMillion: formatUsd(parseUsd(r.outputPricePerMillion)),
  fallbackModel: r.fallbackModel,
  requestsPerMinute: r.requestsPerMinute,
  tokensPerMinute: r.tokensPerMinute,
  maxConcurrentCalls: r.maxConcurrentCalls,
});

// The order `resolveModel` picks the default in: input + output price per million, then id.
const cheapestFirst = [sql`${models.inputPricePerMillion} + ${models.outputPricePerMillion}`, asc(models.id)] as const;

// Every creation and every run looks models up: they are answered from the catalog as read at
// most half a second ago (see catalog-memory.ts), dropped at once by the changes below.
const remembered = preparedPerDatabase((db: Db) => {
  const all = db.select().from(models).orderBy(...cheapestFirst).limit(sql.placeholder("limit")).prepare("runner_catalog_cheapest_first");
  return new CatalogMemory(async (limit) => (await all.execute({ limit })).map((row) => Object.freeze(present(row))));
});

export async function ensureSeedModels(db: Db, seeds: CatalogModel[]): Promise<number> {
  const inserted = await db.insert(models).values(seeds).onConflictDoNothing().returning({ id: models.id });
  remembered(db).forget();
  return inserted.length;
}

export async function listModels(db: Db): Promise<CatalogModel[]> {
  return (await db.select().from(models).orderBy(asc(models.id))).map(present);
}

const fallbackOf = alias(models, "fallback_of");

// Read for every article created and every run: prepared once (see kit/src/prepared-statements.ts).
const lookups = preparedPerDatabase((db: Db) => ({
  model: db.select().from(models).where(eq(models.id, sql.placeholder("id"))).prepare("runner_find_model"),
  modelAndFallback: db
    .select()
    .from(models)
    .where(or(eq(models.id, sql.placeholder("id")), inArray(models.id, db.select({ id: fallbackOf.fallbackModel }).from(fallbackOf).where(eq(fallbackOf.id, sql.placeholder("id"))))))
    .prepare("runner_find_model_and_fallback"),
}));

export async function findModel(db: Db, id: string): Promise<CatalogModel | undefined> {
  const [row] = await lookups(db).model.execute({ id });
  return row ? present(row) : undefined;
}

/** The model and the model it falls back to (when it names one), from one read of the catalog. */
export async function findModelAndFallback(db: Db, id: string): Promise<{ model?: CatalogModel; fallback?: CatalogModel }> {
  const catalog = await remembered(db).view();
  if (catalog) {
    const model = catalog.byId.get(id);
    return { model, fallback: model?.fallbackModel ? catalog.byId.get(model.fallbackModel) : undefined };
  }
  const rows = await lookups(db).modelAndFallback.execute({ id });
  const model = rows.find((r) => r.id === id);
  const fallback = model?.fallbackModel ? rows.find((r) => r.id === model.fallbackModel) : undefined;
  return { model: model && present(model), fallback: fallback && present(fallback) };
}

export async function getModel(db: Db, id: string): Promise<CatalogModel> {
  const model = await findModel(db, id);
  if (!model) throw notFound(`no model "${id}" in the catalog`);
  return model;
}

/**
 * The requested model when it is active and its provider reachable; without a request, the
 * cheapest such model (input + output price per million, then id, so the choice is stable).
 */
export async function resolveModel(db: Db, requested: string, reachable: ProviderCheck): Promise<CatalogModel> {
  const catalog = await remembered(db).view();
  if (requested.trim() !== "") {
    const model = catalog ? catalog.byId.get(requested.trim()) : await findModel(db, requested.trim());
    if (!model || !model.active) throw invalidFields({ model: [`The selected model "${requested}" is not an active model.`] });
    if (!reachable(model.id)) throw invalidFields({ model: [`The selected model "${requested}" is not available: its provider is not configured.`] });
    return model;
  }
  const candidates = catalog ? catalog.cheapestFirst : (await db.select().from(models).where(eq(models.active, true)).orderBy(...cheapestFirst)).map(present);
  const cheapest = candidates.find((m) => m.active && reachable(m.id));
  if (!cheapest) throw precondition("No active model is available; an operator must add or activate one.");
  return cheapest;
}

function checkPrice(field: string, value: string, errors: Record<string, string[]>) {
  if (!isUsdDecimal(value)) errors[field] = [`${field} must be a non-negative decimal amount with at most 12 decimal places.`];
}

type RateLimitField = keyof typeof RATE_LIMIT_MAX;

function checkRateLimit(field: RateLimitField, value: number | null | undefined, errors: Record<string, string[]>) {
  if (value === null || value === undefined) return;
  const max = RATE_LIMIT_MAX[field];
  if (!Number.isSafeInteger(value) || value < 1 || value > max) {
    errors[field] = [`${field} must be a whole number from 1 to ${max.toLocaleString("en-US")} (leave it unset when not configured), got ${value}.`];
  }
}

function checkRateLimits(limits: Partial<Pick<CatalogModel, "requestsPerMinute" | "tokensPerMinute" | "maxConcurrentCalls">>, errors: Record<string, string[]>) {
  checkRateLimit("requests_per_minute", limits.requestsPerMinute, errors);
  checkRateLimit("tokens_per_minute", limits.tokensPerMinute, errors);
  checkRateLimit("max_concurrent_calls", limits.maxConcurrentCalls, errors);
}

async function checkFallback(db: Db, id: string, fallback: string, errors: Record<string, string[]>) {
  if (fallback === id) errors.fallback_model = ["A model cannot fall back to itself."];
  else if (!(await findModel(db, fallback))) errors.fallback_model = [`No model "${fallback}" in the catalog.`];
}

export async function addModel(db: Db, model: CatalogModel): Promise<CatalogModel> {
  const errors: Record<string, string[]> = {};
  if (!MODEL_ID.test(model.id)) errors.id = ["id must look like provider:model (lower-case provider name)."];
  checkPrice("input_price_per_million", model.inputPricePerMillion, errors);
  checkPrice("output_price_per_million", model.outputPricePerMillion, errors);
  checkRateLimits(model, errors);
  if (model.fallbackModel) await checkFallback(db, model.id, model.fallbackModel, errors);
  throwIfAny(errors);
  const [row] = await db.insert(models).values({ ...model, fallbackModel: model.fallbackModel || null }).onConflictDoNothing().returning();
  remembered(db).forget();
  if (!row) throw conflict(`model "${model.id}" already exists`);
  return present(row);
}

export interface ModelChanges {
  active?: boolean;
  supportsBatch?: boolean;
  inputPricePerMillion?: string;
  outputPricePerMillion?: string;
  /** "" removes the fallback. */
  fallbackModel?: string;
  /** Rate limits: a number sets the limit, null removes it (not configured), undefined leaves it. */
  requestsPerMinute?: number | null;
  tokensPerMinute?: number | null;
  maxConcurrentCalls?: number | null;
}

export async function updateModel(db: Db, id: string, changes: ModelChanges): Promise<CatalogModel> {
  await getModel(db, id);
  const errors: Record<string, string[]> = {};
  if (changes.inputPricePerMillion !== undefined) checkPrice("input_price_per_million", changes.inputPricePerMillion, errors);
  if (changes.outputPricePerMillion !== undefined) checkPrice("output_price_per_million", changes.outputPricePerMillion, errors);
  checkRateLimits(changes, errors);
  if (changes.fallbackModel) await checkFallback(db, id, changes.fallbackModel, errors);
  throwIfAny(errors);
  const [row] = await db
    .update(models)
    .set({
      active: changes.active,
      supportsBatch: changes.supportsBatch,
      inputPricePerMillion: changes.inputPricePerMillion,
      outputPricePerMillion: changes.outputPricePerMillion,
      fallbackModel: changes.fallbackModel === undefined ? undefined : changes.fallbackModel || null,
      requestsPerMinute: changes.requestsPerMinute,
      tokensPerMinute: changes.tokensPerMinute,
      maxConcurrentCalls: changes.maxConcurrentCalls,
      updatedAt: new Date(),
    })
    .where(eq(models.id, id))
    .returning();
  remembered(db).forget();
  return present(row!);
}
