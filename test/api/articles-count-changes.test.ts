// The recorded article count changes behind list totals (migrations 0003, 0008 and 0010): a status
// change is one recorded row, a change that moves no count records nothing, a backlog larger than
// a folding batch folds exactly, and the totals a list reads are exact in every snapshot while
// articles are created and change status side by side, before and after article-store folds the
// changes.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { sql as query } from "drizzle-orm";
import { useStack, type TestStack } from "../harness/stack.ts";
import { createProject, createTenant, type Tenant } from "../harness/tenants.ts";
import { eventually } from "../harness/eventually.ts";
import { articleStoreDatabase } from "./articles-fixtures.ts";
import type { Db } from "../../services/article-store/src/db/client.ts";
import { listArticleIds } from "../../services/article-store/src/domain/article-list.ts";
import { FOLD_BATCH, foldCountChanges } from "../../services/article-store/src/domain/article-counts.ts";

let stack: TestStack;
let tenant: Tenant;
let sql: postgres.Sql;
let db: Db;

beforeAll(async () => {
  stack = await useStack();
  tenant = await createTenant(stack);
  ({ sql, db } = articleStoreDatabase(stack, 12));
});

afterAll(async () => {
  await sql.end();
});

const STATUSES = ["queued", "batching", "writing", "polishing", "completed", "published", "failed"] as const;

/** What generation fixed at creation, for articles filled in straight into the database. */
const SETTINGS = {
  workflowId: 1, workflowRevision: 1, builtinWorkflow: true, model: "simulator:sim-fast", targetAudience: null, brandVoiceId: null,
  includeKeyTakeaways: false, includeFaq: false, headingCapitalization: null, researchEnabled: false, researchMaxSources: 5,
  researchMinContentWords: 100, researchMaxWordsPerSource: 1000, researchIncludeDomains: [], researchExcludeDomains: [],
  useBatchApi: false, additionalInstruction: null, imageCount: 0, imageAspectRatio: null, imagePresetId: null, reservedWords: 1200,
};

/**
 * Inserts `n` articles of the project in one statement. No outbox row, and checked for
 * originality, so no background work takes them up: only this test changes them.
 */
async function insertArticles(projectId: number, n: number, status = "queued", createdAt = "now()"): Promise<number[]> {
  const rows = await sql.unsafe(
    `insert into article_store.articles (external_id, account_id, project_id, title, status, article_type, target_word_count, tone, point_of_view, language, settings, originality_checked_at, created_at)
     select gen_random_uuid(), $1, $2, 'Counted ' || g, $3, 'blog_post', 1000, 'friendly', 'second_person', 'en', $5::jsonb, now(), ${createdAt}
     from generate_series(1, $4::int) g returning id`,
    [tenant.accountId, projectId, status, n, JSON.stringify(SETTINGS)],
  );
  return rows.map((r) => Number(r.id));
}

/** Folds until no change of these projects is left (article-store's own folder may hold the turn). */
async function foldedAll(projectIds: number[]) {
  const unfolded = async () => {
    await foldCountChanges(db);
    const [{ n }] = await sql`select count(*)::int as n from article_store.article_count_changes where project_id = any(${projectIds}::int8[])`;
    return n as number;
  };
  await eventually(unfolded, (n) => n === 0, 10_000, "the count changes to be folded");
}

/** Rolls the test's transaction back with what it read. */
class RolledBack extends Error {
  constructor(readonly rows: unknown[]) {
    super("rolled back");
  }
}

describe("recorded count changes", () => {
  test("a status change is one row; a change of no counted value records nothing", async () => {
    const projectId = await createProject(stack, tenant.accountId, "One row per move");
    // Inside one transaction, so the folder (which sees only committed rows) leaves them be.
    const recorded = await sql.begin(async (tx) => {
      const [{ id }] = await tx`
        insert into article_store.articles (external_id, account_id, project_id, title, status, article_type, target_word_count, tone, point_of_view, language, settings)
        values (gen_random_uuid(), ${tenant.accountId}, ${projectId}, 'Moved', 'queued', 'blog_post', 1000, 'friendly', 'second_person', 'en', ${JSON.stringify(SETTINGS)}::jsonb)
        returning id`;
      await tx`update article_store.articles set status = 'writing', current_step = 'Write' where id = ${id}`;
      await tx`update article_store.articles set current_step = 'Polish', updated_at = now() where id = ${id}`;
      await tx`update article_store.articles set created_at = created_at + interval '1 millisecond' where id = ${id} and (created_at at time zone 'UTC')::time < '23:59:59'`;
      await tx`update article_store.articles set status = 'completed' where id = ${id}`;
      const rows = await tx`select status, change::int, moved_from from article_store.article_count_changes where project_id = ${projectId} order by id`;
      throw new RolledBack(rows);
    }).catch((e) => (e instanceof RolledBack ? e.rows : e));
    expect(recorded).toEqual([
      { status: "queued", change: 1, moved_from: null },
      { status: "writing", change: 1, moved_from: "queued" },
      { status: "completed", change: 1, moved_from: "writing" },
    ]);
  });

  test("a move to another project or day counts off the old and on the new", async () => {
    const from = await createProject(stack, tenant.accountId, "Moved from");
    const to = await createProject(stack, tenant.accountId, "Moved to");
    const [id] = await insertArticles(from, 1, "completed", "'2025-01-01 12:00:00+00'");
    await sql`update article_store.articles set project_id = ${to}, created_at = '2025-02-01 12:00:00+00' where id = ${id}`;
    for (const [projectId, total] of [[from, 0], [to, 1]]) {
      expect((await listArticleIds(db, { projectIds: [projectId], status: "completed", page: 1, perPage: 20 })).total).toBe(total);
      expect((await listArticleIds(db, { projectIds: [projectId], page: 1, perPage: 20 })).total).toBe(total);
    }
    await foldedAll([from, to]);
    const days = await sql`select project_id::int, day::text, articles::int from article_store.article_day_counts where project_id in (${from}, ${to}) and articles <> 0 order by project_id`;
    expect([...days]).toEqual([{ project_id: to, day: "2025-02-01", articles: 1 }]);
  });

  test("a backlog of several folding batches (25,000 status changes in one statement) folds in passes, exactly", async () => {
    const projectId = await createProject(stack, tenant.accountId, "Backlog");
    // Finished articles only: unfinished ones without a job are stranded work, which article-store's
    // reconciler would take up (and generate) for the rest of the suite.
    const ids = await insertArticles(projectId, 25_000, "completed", "'2025-03-01 12:00:00+00'");
    // Row by row, a recorded change each: more than two folding batches of them at once.
    await sql`update article_store.articles set status = case when id % 4 = 0 then 'failed' else 'published' end where id = any(${ids}::int8[])`;
    const [{ recorded }] = await sql`select count(*)::int as recorded from article_store.article_count_changes where project_id = ${projectId}`;
    expect(recorded).toBeGreaterThan(2 * FOLD_BATCH);
    await foldedAll([projectId]);
    const failed = ids.filter((id) => id % 4 === 0).length;
    const counts = await sql`select status, articles::int from article_store.article_counts where project_id = ${projectId} and articles <> 0 order by status`;
    expect([...counts]).toEqual([
      { status: "failed", articles: failed },
      { status: "published", articles: 25_000 - failed },
    ]);
    expect((await listArticleIds(db, { projectIds: [projectId], status: "published", page: 1, perPage: 20 })).total).toBe(25_000 - failed);
  });

  test("totals are exact in every snapshot while articles are created and move side by side", async () => {
    const projectId = await createProject(stack, tenant.accountId, "Busy project");
    const other = await createProject(stack, tenant.accountId, "Busy neighbour");
    let running = true;

    // Writers: single and bulk creations, one-by-one and bulk status changes, in both projects.
    const writer = async (w: number) => {
      for (let round = 0; running; round++) {
        const target = round % 3 === 0 ? other : projectId;
        const ids = await insertArticles(target, 1 + ((w + round) % 4), w % 2 === 0 ? "queued" : "batching");
        await sql`update article_store.articles set status = 'writing' where id = any(${ids}::int8[])`;
        for (const id of ids) await sql`update article_store.articles set status = ${id % 5 === 0 ? "failed" : "completed"} where id = ${id}`;
        if (round % 4 === 0) await sql`update article_store.articles set status = 'published' where id = any(${ids}::int8[]) and status = 'completed'`;
      }
    };
    // A folder racing article-store's own (only one folds at a time; the other gets 0).
    const folder = async () => {
      while (running) {
        await foldCountChanges(db);
        await Bun.sleep(37);
      }
    };
    // Readers: the list's totals and the real counts, read in one repeatable-read snapshot.
    let snapshots = 0;
    const mismatches: unknown[] = [];
    const reader = async () => {
      while (running) {
        await db.transaction(
          async (tx) => {
            const t = tx as unknown as Db;
            const counted = await t.execute<{ project_id: string; status: string; n: string }>(
              query`select project_id, status, count(*) as n from article_store.articles where project_id in (${projectId}, ${other}) group by 1, 2`,
            );
            const count = (projects: number[], status?: string) =>
              counted.filter((r) => projects.includes(Number(r.project_id)) && (status === undefined || r.status === status)).reduce((sum, r) => sum + Number(r.n), 0);
            for (const projects of [[projectId], [projectId, other]]) {
              for (const status of [undefined, ...STATUSES]) {
                const listed = await listArticleIds(t, { projectIds: projects, status, page: 1, perPage: 1 });
                if (listed.total !== count(projects, status)) mismatches.push({ projects, status, listed: listed.total, actual: count(projects, status) });
              }
            }
            snapshots++;
          },
          { isolationLevel: "repeatable read", accessMode: "read only" },
        );
      }
    };

    const work = [...Array.from({ length: 6 }, (_, w) => writer(w)), folder(), reader(), reader()];
    await Bun.sleep(4_000);
    running = false;
    await Promise.all(work);
    expect(mismatches).toEqual([]);
    expect(snapshots).toBeGreaterThan(10);

    // Once everything is folded, the counts alone hold the totals.
    await foldedAll([projectId, other]);
    const stored = await sql`select status, articles::int from article_store.article_counts where project_id = ${projectId} and articles <> 0 order by status`;
    const actual = await sql`select status, count(*)::int as articles from article_store.articles where project_id = ${projectId} group by status order by status`;
    expect(stored).toEqual(actual);
  }, 30_000);
});
