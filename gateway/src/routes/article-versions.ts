// An article after generation (beyond the spec, additive): its versions, restoring one, editing
// the article (PATCH with If-Match) and revising one section. Each route translates HTTP to the
// operations gRPC's ArticleService runs too (articles/article-versions.ts, section-revisions.ts);
// they share the "articles" rate limit.
import { Elysia } from "elysia";
import type { ArticleOperations } from "../articles/article-operations.ts";
import { ERASED_MESSAGE, unpublishOf } from "../articles/article-erasure.ts";
import { retriedMessage } from "../articles/article-retry.ts";
import { articleEtag, ifMatchVersion, presentVersion, type ChangedArticle } from "../articles/article-versions.ts";
import type { V1Gate } from "../plugins/caller.ts";
import { v1Mount, type CallerMount } from "../plugins/v1-gate.ts";
import { queryValues } from "../validation.ts";
import { idempotencyKeyOf, REPLAYED_HEADER } from "../articles/idempotency.ts";
import { presentRevision } from "../articles/section-revisions.ts";
import { presentArticle } from "../../../services/kit/src/public-article.ts";

const TAGS = ["Articles"];

/** The changed article with its new ETag. */
function changedAnswer({ article, project }: ChangedArticle, message: string, headers: Record<string, string | number>) {
  const etag = articleEtag(article);
  if (etag) headers.ETag = etag;
  return { success: true, message, data: presentArticle(article, project) };
}

/** `mount`: /v1 with a key, or the dashboard's API with a session (the same handlers). */
export const articleVersionRoutes = (gate: V1Gate, articles: ArticleOperations, mount: CallerMount = v1Mount(gate)) => {
  const at = mount.prefix;
  return new Elysia({ name: "article-version-routes", seed: at })
    .use(mount.gateFor("articles"))
    .get(
      `${at}/articles/:id/versions`,
      async ({ caller, params, set }) => {
        const { article, versions } = await articles.versions.list(caller, params.id);
        const etag = articleEtag(article);
        if (etag) set.headers.ETag = etag;
        return { success: true, data: versions.map((v) => presentVersion(v, article)) };
      },
      { detail: { summary: "The article's versions, oldest first: generation, humanization, edits and restores", tags: TAGS } },
    )
    .get(
      `${at}/articles/:id/versions/:version`,
      async ({ caller, params }) => {
        const { article, version } = await articles.versions.get(caller, params.id, params.version);
        return { success: true, data: presentVersion(version, article) };
      },
      { detail: { summary: "One version of the article by its number, with its content, description and sources", tags: TAGS } },
    )
    .post(
      `${at}/articles/:id/versions/:version/restore`,
      async ({ caller, params, request, set }) => {
        const restored = await articles.versions.restore(caller, params.id, params.version, ifMatchVersion(request.headers.get("if-match")));
        return changedAnswer(restored, `Version ${params.version} restored as version ${restored.version.number}.`, set.headers as Record<string, string | number>);
      },
      { detail: { summary: "Make an earlier version current again, as a new version (If-Match optional; 409 when stale)", tags: TAGS } },
    )
    .get(
      `${at}/articles/:id/content`,
      async ({ caller, params, request }) => {
        const exported = await articles.exportContent(caller, params.id, queryValues(request.url).format);
        const headers: Record<string, string> = { "content-type": exported.contentType };
        if (exported.etag) headers.ETag = exported.etag;
        return new Response(exported.content, { headers });
      },
      { detail: { summary: "The current content as markdown, sanitised HTML, plain text or schema.org JSON-LD", tags: TAGS } },
    )
    .post(
      `${at}/articles/:id/retry`,
      async ({ caller, params }) => {
        const retried = await articles.retries.retry(caller, params.id);
        return { success: true, message: retriedMessage(retried), data: presentArticle(retried.article, retried.project) };
      },
      { detail: { summary: "Retry a failed (or cancelled) article: queued again, resuming from the step that failed without re-running or re-billing finished steps", tags: TAGS } },
    )
    .post(
      `${at}/articles/:id/revisions`,
      async ({ caller, params, body, request, set }) => {
        const queued = await articles.revisions.revise(caller, params.id, body, idempotencyKeyOf(request.headers));
        set.status = 202;
        if (queued.replayed) set.headers[REPLAYED_HEADER] = "true";
        return { success: true, message: `Revision ${queued.revision.number} queued: section ${queued.revision.sectionIndex} ("${queued.revision.sectionHeading}") will be revised as a new version.`, data: presentRevision(queued.revision) };
      },
      { detail: { summary: "Rewrite, expand, shorten, regenerate, translate or humanize one H2 section of a completed or published article, as a new version where only that section changed", tags: TAGS } },
    )
    .get(
      `${at}/articles/:id/revisions`,
      async ({ caller, params }) => {
        const { sections, revisions } = await articles.revisions.list(caller, params.id);
        return { success: true, data: { sections, revisions: revisions.map(presentRevision) } };
      },
      { detail: { summary: "The article's H2 sections (what a revision names) and its section revisions, newest first", tags: TAGS } },
    )
    .delete(
      `${at}/articles/:id`,
      async ({ caller, params, request }) => {
        await articles.erasure.erase(caller, params.id, unpublishOf(queryValues(request.url).unpublish));
        return { success: true, message: ERASED_MESSAGE };
      },
      { detail: { summary: "Delete an article and erase its data everywhere; an erasure record without content stays for billing", tags: TAGS } },
    )
    .patch(
      `${at}/articles/:id`,
      async ({ caller, params, body, request, set }) => {
        const edited = await articles.versions.edit(caller, params.id, body, ifMatchVersion(request.headers.get("if-match")));
        return changedAnswer(edited, `Article updated as version ${edited.version.number}.`, set.headers as Record<string, string | number>);
      },
      { detail: { summary: "Edit the content and description of a completed or published article as a new version (If-Match or base_version_id; 409 when stale)", tags: TAGS } },
    );
};
