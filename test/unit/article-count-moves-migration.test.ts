// Upgrading article-store to one recorded row per status change (migrations 0007 and 0008) while
// changes recorded the old way (a row per status) wait to be folded: reads and the folder take
// both kinds, so totals stay exact across the upgrade. Runs on a real Postgres, in a throwaway
// database.
import { afterAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import postgres from "postgres";
import { openServiceDatabase } from "../../services/kit/src/db.ts";
import { schema } from "../../services/article-store/src/db/client.ts";
import { listArticleIds } from "../../services/article-store/src/domain/article-list.ts";
import { foldCountChanges } from "../../services/article-store/src/domain/article-counts.ts";
import { migrationsBefore } from "../harness/migrations-before.ts";

const ADMIN_URL = process.env.TEST_DATABASE_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const MIGRATIONS = fileURLToPath(new URL("../../services/article-store/src/db/migrations", import.meta.url));
const name = `count_moves_${process.pid}_${randomBytes(3).toString("hex")}`;
const url = Object.assign(new URL(ADMIN_URL), { pathname: `/${name}` }).toString();
const before = migrationsBefore(MIGRATIONS, "0007_article_count_moves");

afterAll(async () => {
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop database if exists "${name}" with (force)`);
  await admin.end();
  before.remove();
});

const STATUSES = ["queued", "writing", "completed", "failed"] as const;

describe("one recorded row per status change, applied over changes recorded the old way", () => {
  test("totals stay exact before and after folding", async () => {
    const open = (migrationsFolder: string) => openServiceDatabase({ databaseUrl: url, schemaName: "article_store", schema, migrationsFolder, poolSize: 2 });
    const old = await open(before.folder);
    const change = (sql: postgres.Sql, n: number, projectId: number) => sql.unsafe(`
      with made as (
        insert into article_store.articles (external_id, account_id, project_id, title, status, article_type, target_word_count, tone, point_of_view, language, settings)
        select gen_random_uuid(), 1, ${projectId}, 'a', 'queued', 'blog_post', 1000, 'friendly', 'second_person', 'en', '{}'::jsonb from generate_series(1, ${n})
        returning id
      ) select id from made`).then(async (rows) => {
      const ids = rows.map((r) => Number(r.id));
      await sql`update article_store.articles set status = 'writing' where id = any(${ids}::int8[])`;
      await sql`update article_store.articles set status = 'completed' where id = any(${ids.slice(1)}::int8[])`;
      await sql`update article_store.articles set status = 'failed' where id = ${ids[0]}`;
      await sql`update article_store.articles set status = 'queued' where id = any(${ids.slice(-2)}::int8[])`;
    });
    await change(old.sql, 7, 1);
    await change(old.sql, 3, 2);
    const [{ recorded }] = await old.sql`select count(*)::int as recorded from article_store.article_count_changes where change < 0`;
    expect(recorded).toBeGreaterThan(0);
    await old.close();

    const upgraded = await open(MIGRATIONS);
    try {
      await change(upgraded.sql, 5, 1);
      const expectExact = async () => {
        const actual = await upgraded.sql`select project_id::int, status, count(*)::int as n from article_store.articles group by 1, 2`;
        const count = (projects: number[], status?: string) => actual.filter((r) => projects.includes(r.project_id) && (!status || r.status === status)).reduce((s, r) => s + r.n, 0);
        for (const projectIds of [[1], [2], [1, 2]]) {
          for (const status of [undefined, ...STATUSES]) {
            const { total } = await listArticleIds(upgraded.db, { projectIds, status, page: 1, perPage: 5 });
            expect({ projectIds, status, total }).toEqual({ projectIds, status, total: count(projectIds, status) });
          }
        }
      };
      await expectExact();
      expect(await foldCountChanges(upgraded.db)).toBeGreaterThan(0);
      const [{ left }] = await upgraded.sql`select count(*)::int as left from article_store.article_count_changes`;
      expect(left).toBe(0);
      await expectExact();
      const counts = await upgraded.sql`select project_id::int, status, articles::int from article_store.article_counts where articles <> 0 order by 1, 2`;
      const actual = await upgraded.sql`select project_id::int, status, count(*)::int as articles from article_store.articles group by 1, 2 order by 1, 2`;
      expect(counts).toEqual(actual);
    } finally {
      await upgraded.close();
    }
  });
});
