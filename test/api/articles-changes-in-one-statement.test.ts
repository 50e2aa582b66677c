// Creation, progress and completion each run as one statement (docs/performance-history.md, item 17): the record
// they answer with is the one a read gives, column for column; what the locked transaction
// decided before is still decided on the row (a repeat, a late report, a failed article, two
// completions or a completion and a cancel at once).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomUUID } from "node:crypto";
import postgres from "postgres";
import { eq } from "drizzle-orm";
import { useStack, type TestStack } from "../harness/stack.ts";
import { createTenant, type Tenant } from "../harness/tenants.ts";
import { schema, type Db } from "../../services/article-store/src/db/client.ts";
import { createArticle, getArticleByExternalId, type NewArticle } from "../../services/article-store/src/domain/articles.ts";
import { cancelArticle, completeGeneration, recordProgress } from "../../services/article-store/src/domain/lifecycle.ts";
import { claimIdempotencyKey, KEY_LIFETIME_HOURS } from "../../services/article-store/src/domain/idempotency.ts";
import { articleStoreDatabase, holdGeneration, storedArticle, type GenerationHold } from "./articles-fixtures.ts";

let stack: TestStack;
let hold: GenerationHold;
let tenant: Tenant;
let sql: postgres.Sql;
let db: Db;

beforeAll(async () => {
  stack = await useStack();
  hold = await holdGeneration(stack);
  tenant = await createTenant(stack);
  ({ sql, db } = articleStoreDatabase(stack, 8));
});

afterAll(async () => {
  await sql.end();
  await hold.release();
});

// Every column a value the decoding could get wrong: quotes and braces in an array, nulls and not.
const newArticle = (overrides: Partial<NewArticle> = {}) =>
  storedArticle(
    tenant,
    { title: "One statement", targetKeyword: "pour-over", keywords: ["coffee", 'a "quoted", {braced} word'], countryTargeting: "US", humanize: true, webhookUrl: "https://example.com/hook", ...overrides },
    { workflowId: 7, workflowRevision: 2, builtinWorkflow: false, targetAudience: "baristas", includeKeyTakeaways: true, researchIncludeDomains: ["example.com"] },
  );

const kindOf = (call: Promise<unknown>) =>
  call.then(
    () => "ok",
    (error: { kind?: string }) => error.kind ?? String(error),
  );

const outboxRows = (externalId: string) => db.select().from(schema.outbox).where(eq(schema.outbox.externalId, externalId));
const versionRows = (articleId: number) => db.select().from(schema.articleVersions).where(eq(schema.articleVersions.articleId, articleId));

const done = { content: "# Body\n\nText.", actualWordCount: 2, aiModelUsed: "simulator:sim-fast", cost: "0.0123", moreVersionsFollow: false };

describe("article changes made in one statement", () => {
  test("creation answers the stored record with its outbox row; a repeat replays it; another account's external_id is taken", async () => {
    const input = newArticle();
    const created = await createArticle(db, input);
    expect(created.replayed).toBe(false);
    expect(created.article).toEqual(await getArticleByExternalId(db, input.externalId));
    expect(created.article).toMatchObject({ keywords: input.keywords, settings: input.settings, cost: "0.000000000000", images: [], status: "queued" });
    expect(created.article.createdAt).toBeInstanceOf(Date);
    expect(await outboxRows(input.externalId)).toHaveLength(1);

    const again = await createArticle(db, input);
    expect(again).toEqual({ article: created.article, replayed: true });
    expect(await kindOf(createArticle(db, { ...input, accountId: input.accountId + 1_000_000 }))).toBe("conflict");
    expect(await outboxRows(input.externalId)).toHaveLength(1);
  });

  test("creation with an idempotency key stores the article, its outbox row and the key's first response in one transaction", async () => {
    const input = newArticle();
    const key = { key: `one-statement-${input.externalId}`, requestHash: "h1" };
    const created = await createArticle(db, input, key);
    expect(created.replayed).toBe(false);
    expect(await outboxRows(input.externalId)).toHaveLength(1);
    const replay = await createArticle(db, { ...input, externalId: randomUUID() }, key);
    expect(replay.replayed).toBe(true);
    expect(replay.article.externalId).toBe(input.externalId);
  });

  test("an idempotency claim in one statement: a new key claims, a live one is joined (concurrent claims share it), another body conflicts, an expired one is claimed afresh", async () => {
    const accountId = tenant.accountId;
    const key = `claim-${randomUUID()}`;
    const claims = await Promise.all(Array.from({ length: 6 }, () => claimIdempotencyKey(db, accountId, { key, requestHash: "h1" })));
    expect(new Set(claims.map((c) => c.externalId)).size).toBe(1);
    expect(claims[0]).toMatchObject({ requestHash: "h1", firstResponse: null });
    expect(await kindOf(claimIdempotencyKey(db, accountId, { key, requestHash: "h2" }))).toBe("conflict");

    // Created under the claim, the key replays the article.
    const input = newArticle({ externalId: claims[0]!.externalId });
    const created = await createArticle(db, input, { key, requestHash: "h1" });
    expect((await claimIdempotencyKey(db, accountId, { key, requestHash: "h1" })).firstResponse).toEqual(created.article);

    // Past its lifetime the key binds the next request, whatever its body.
    await db.update(schema.idempotencyKeys).set({ createdAt: new Date(Date.now() - (KEY_LIFETIME_HOURS + 1) * 3_600_000) }).where(eq(schema.idempotencyKeys.key, key));
    const afresh = await claimIdempotencyKey(db, accountId, { key, requestHash: "h2" });
    expect(afresh).toMatchObject({ requestHash: "h2", firstResponse: null });
    expect(afresh.externalId).not.toBe(claims[0]!.externalId);
  });

  test("progress answers the stored record; a finished article is left as it is, a failed one refuses, an unknown one is not found", async () => {
    const input = newArticle();
    await createArticle(db, input);
    const writing = await recordProgress(db, input.externalId.toUpperCase(), { status: "writing", currentStep: "Outline", cost: "0.5" });
    expect(writing).toEqual(await getArticleByExternalId(db, input.externalId));
    expect(writing).toMatchObject({ status: "writing", currentStep: "Outline", cost: "0.500000000000", aiModelUsed: null });
    // Unsent fields keep their values.
    expect(await recordProgress(db, input.externalId, { status: "polishing" })).toMatchObject({ status: "polishing", currentStep: "Outline", cost: "0.500000000000" });

    const completed = await completeGeneration(db, input.externalId, done);
    expect(await recordProgress(db, input.externalId, { status: "writing", currentStep: "late" })).toEqual(completed);

    const failed = newArticle();
    await createArticle(db, failed);
    await cancelArticle(db, failed.externalId);
    expect(await kindOf(recordProgress(db, failed.externalId, { status: "writing" }))).toBe("precondition");
    expect(await kindOf(recordProgress(db, randomUUID(), { status: "writing" }))).toBe("not_found");
  });

  test("completion stores version 1 once: concurrent completions agree on one version, a retry changes nothing", async () => {
    const input = newArticle();
    const { article } = await createArticle(db, input);
    await recordProgress(db, input.externalId, { status: "writing", currentStep: "Draft" });
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => completeGeneration(db, input.externalId, { ...done, content: `Body ${i}`, aiDetectionScore: 40 + i })));
    const versions = await versionRows(article.id);
    expect(versions).toHaveLength(1);
    const stored = await getArticleByExternalId(db, input.externalId);
    for (const answer of answers) expect(answer).toEqual(stored);
    expect(stored).toMatchObject({ status: "completed", currentStep: null, currentVersionId: versions[0]!.id, content: versions[0]!.content, originalContent: versions[0]!.content, aiDetectionScore: versions[0]!.aiDetectionScore, cost: "0.012300000000" });
    expect(stored.originalityCheckedAt).toEqual(versions[0]!.originalityCheckedAt);
    expect(await completeGeneration(db, input.externalId, { ...done, content: "a retry" })).toEqual(stored);
  });

  test("a completion with more versions to follow keeps the step and the description it was not given", async () => {
    const input = newArticle();
    await createArticle(db, input);
    await recordProgress(db, input.externalId, { status: "writing", currentStep: "Draft" });
    const polishing = await completeGeneration(db, input.externalId, { ...done, moreVersionsFollow: true, description: "Meta" });
    expect(polishing).toMatchObject({ status: "polishing", currentStep: "Draft", description: "Meta", aiDetectionScore: null, originalityCheckedAt: null });
  });

  test("a completion and a cancel at once: one of them wins, decided on the row", async () => {
    for (let i = 0; i < 5; i++) {
      const input = newArticle();
      const { article } = await createArticle(db, input);
      const [completion, cancel] = await Promise.all([kindOf(completeGeneration(db, input.externalId, done)), kindOf(cancelArticle(db, input.externalId))]);
      const stored = await getArticleByExternalId(db, input.externalId);
      if (stored.status === "completed") {
        expect([completion, cancel]).toEqual(["ok", "precondition"]);
        expect(await versionRows(article.id)).toHaveLength(1);
      } else {
        expect(stored.status).toBe("failed");
        expect([completion, cancel]).toEqual(["precondition", "ok"]);
        expect(await versionRows(article.id)).toHaveLength(0);
      }
    }
  });

  test("article texts and step outputs are compressed with lz4 when stored (pglz cost several times its CPU per row)", async () => {
    const columns = await sql`
      select c.relname || '.' || a.attname as name, a.attcompression as compression
      from pg_attribute a join pg_class c on c.oid = a.attrelid join pg_namespace n on n.oid = c.relnamespace
      where (n.nspname, c.relname, a.attname) in (('article_store', 'articles', 'content'), ('article_store', 'articles', 'original_content'),
        ('article_store', 'article_versions', 'content'), ('generation_runner', 'step_checkpoints', 'output'), ('generation_runner', 'finishing_checkpoints', 'output'))
      order by 1`;
    expect(columns.map((c) => `${c.name} ${c.compression}`)).toEqual([
      "article_versions.content l",
      "articles.content l",
      "articles.original_content l",
      "finishing_checkpoints.output l",
      "step_checkpoints.output l",
    ]);
  });
});

