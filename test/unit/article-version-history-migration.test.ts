// Upgrading article-store to numbered version history (migration 0015) over articles stored the old
// way, one version per kind: every stored version stays with its number, kind, text and score, and
// takes what its article showed with it (description, sources, citation count; the brief checks
// for the current one); then a further edit of the same kind is a version of its own, while the
// generation run still adds each of its kinds once. Runs on a real Postgres, in a throwaway database.
import { afterAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import postgres from "postgres";
import { openServiceDatabase } from "../../services/kit/src/db.ts";
import { schema } from "../../services/article-store/src/db/client.ts";
import { editArticle, listVersions } from "../../services/article-store/src/domain/article-versions.ts";
import { migrationsBefore } from "../harness/migrations-before.ts";

const ADMIN_URL = process.env.TEST_DATABASE_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const MIGRATIONS = fileURLToPath(new URL("../../services/article-store/src/db/migrations", import.meta.url));
const name = `version_history_${process.pid}_${randomBytes(3).toString("hex")}`;
const url = Object.assign(new URL(ADMIN_URL), { pathname: `/${name}` }).toString();
const before = migrationsBefore(MIGRATIONS, "0015_article_version_history");

afterAll(async () => {
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop database if exists "${name}" with (force)`);
  await admin.end();
  before.remove();
});

const SOURCES = [{ number: 1, url: "https://example.com/a", title: "A", siteName: "Example", fetchedAt: "2026-01-01T00:00:00.000Z", cited: true }];

describe("numbered version history over versions stored one per kind", () => {
  test("keeps every version and what it showed; edits then add versions of their own", async () => {
    const open = (migrationsFolder: string) => openServiceDatabase({ databaseUrl: url, schemaName: "article_store", schema, migrationsFolder, poolSize: 2 });
    const old = await open(before.folder);
    const [{ id, external_id: externalId }] = await old.sql`
      insert into article_store.articles (external_id, account_id, project_id, title, status, article_type, target_word_count, tone, point_of_view, language, settings, description, sources, citations_removed, quality)
      values (gen_random_uuid(), 1, 1, 'Grinders', 'completed', 'blog_post', 1000, 'friendly', 'second_person', 'en', '{"citations": "list"}'::jsonb, 'Meta', ${JSON.stringify(SOURCES)}::jsonb, 2, '{"checks": []}'::jsonb)
      returning id, external_id`;
    const [v1] = await old.sql`insert into article_store.article_versions (article_id, number, kind, content, word_count, ai_detection_score, originality_checked_at) values (${id}, 1, 'generated', 'first text', 2, 40, now()) returning id`;
    const [v2] = await old.sql`insert into article_store.article_versions (article_id, number, kind, content, word_count, ai_detection_score, originality_checked_at) values (${id}, 2, 'humanized', 'second text', 2, 10, now()) returning id`;
    await old.sql`update article_store.articles set content = 'second text', original_content = 'first text', current_version_id = ${v2!.id} where id = ${id}`;
    await old.close();

    const upgraded = await open(MIGRATIONS);
    try {
      const { versions } = await listVersions(upgraded.db, externalId);
      expect(versions.map((v) => [v.id, v.number, v.kind, v.wordCount, v.aiDetectionScore, v.description, v.citationsRemoved, v.madeByWorkload])).toEqual([
        [Number(v1!.id), 1, "generated", 2, 40, "Meta", 2, "generation-runner"],
        [Number(v2!.id), 2, "humanized", 2, 10, "Meta", 2, "generation-runner"],
      ]);
      expect(versions[0]!.sources).toEqual(SOURCES);
      expect(versions[0]!.quality).toBeNull();
      expect(versions[1]!.quality).toEqual({ checks: [] });

      // Two edits: two versions of the same kind, each on the one before.
      const first = await editArticle(upgraded.db, externalId, { baseVersionId: Number(v2!.id), content: "# Grinders\n\nBurrs [1] and blades [7]." }, { keyId: 5 });
      expect(first.version).toMatchObject({ number: 3, kind: "edited", madeByKeyId: 5, citationsRemoved: 1, aiDetectionScore: null });
      expect(first.version.sources[0]!.cited).toBe(true);
      const second = await editArticle(upgraded.db, externalId, { baseVersionId: first.version.id, description: "New meta" }, { keyId: 5 });
      expect(second.version).toMatchObject({ number: 4, kind: "edited", content: first.version.content, description: "New meta" });
      expect(second.article).toMatchObject({ currentVersionId: second.version.id, description: "New meta", originalContent: "first text", status: "completed" });

      // The run's kinds stay one each.
      await expect(upgraded.sql`insert into article_store.article_versions (article_id, number, kind, content, word_count) values (${id}, 9, 'humanized', 'again', 1)`).rejects.toThrow();
    } finally {
      await upgraded.close();
    }
  });
});
