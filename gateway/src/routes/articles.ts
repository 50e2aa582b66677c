// Article endpoints (spec 4.1–4.3): create, list, retrieve; and the estimate before creating and
// the cost breakdown per step. All share the "articles" rate limit. Each is a translation of HTTP
// to the operations gRPC's ArticleService runs too (articles/article-operations.ts).
import { Elysia } from "elysia";
import type { Article } from "../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import type { ArticleOperations } from "../articles/article-operations.ts";
import { articlePageResponse, articleResponse } from "../articles/presented-json.ts";
import { lastEventIdOf } from "../articles/event-stream.ts";
import { CANCELLED_MESSAGE, REVISION_CANCELLED_MESSAGE } from "../articles/cancellation.ts";
import { idempotencyKeyOf, REPLAYED_HEADER } from "../articles/idempotency.ts";
import { listQueryOf } from "../articles/reading.ts";
import { articleEtag } from "../articles/article-versions.ts";
import type { V1Gate } from "../plugins/caller.ts";
import { v1Gate } from "../plugins/v1-gate.ts";
import { queryValues } from "../validation.ts";
import { presentArticle } from "../../../services/kit/src/public-article.ts";

const TAGS = ["Articles"];

const creationMessage = (article: Article) =>
  article.status === "batching" ? "Article created and submitted for batch generation." : "Article created and queued for generation.";

export const articleRoutes = (gate: V1Gate, articles: ArticleOperations) =>
  new Elysia({ name: "article-routes" })
    .use(v1Gate(gate, "articles"))
    .post(
      "/v1/articles",
      async ({ caller, body, request, set }) => {
        const created = await articles.create(caller, body, idempotencyKeyOf(request.headers));
        set.status = 201;
        if (created.replayed) set.headers[REPLAYED_HEADER] = "true";
        return { success: true, message: creationMessage(created.article), data: presentArticle(created.article, created.project) };
      },
      { detail: { summary: "Create an article and start its generation (Idempotency-Key supported)", tags: TAGS } },
    )
    .post(
      "/v1/articles/estimate",
      async ({ caller, body }) => ({ success: true, data: await articles.estimate(caller, body) }),
      { detail: { summary: "Check a creation body as creation does and estimate its words and cost; creates and reserves nothing", tags: TAGS } },
    )
    .get(
      "/v1/articles",
      async ({ caller, request }) => {
        const page = await articles.list(caller, listQueryOf(queryValues(request.url)));
        return articlePageResponse(page.articles, page.meta);
      },
      { detail: { summary: "List articles of every project the caller can view, newest first", tags: TAGS } },
    )
    .get(
      "/v1/articles/:id",
      async ({ caller, params }) => {
        const found = await articles.get(caller, params.id);
        const response = articleResponse(found);
        // The version content shows: If-Match of a PATCH or restore names it.
        const etag = articleEtag(found.article);
        if (etag) response.headers.set("ETag", etag);
        return response;
      },
      { detail: { summary: "Retrieve an article by numeric id or external_id (poll this)", tags: TAGS } },
    )
    .get(
      "/v1/articles/:id/steps",
      async ({ caller, params }) => ({ success: true, data: await articles.steps(caller, params.id) }),
      { detail: { summary: "Cost breakdown of an article's run: each step, the research, the images and the finishing pass", tags: TAGS } },
    )
    .get(
      "/v1/articles/:id/events",
      async ({ caller, params, request }) => {
        const lastEventId = lastEventIdOf(request.headers);
        return articles.events.open(await articles.watch(caller, params.id, lastEventId));
      },
      { detail: { summary: "Live progress as Server-Sent Events: state changes, steps, sources, images, then completed, published or failed (Last-Event-ID resumes)", tags: TAGS } },
    )
    .post(
      "/v1/articles/:id/cancel",
      async ({ caller, params }) => {
        const { article, project } = await articles.cancel(caller, params.id);
        // A finished article's cancel stopped its section revision under way; the article is as it was.
        const message = article.status === "completed" || article.status === "published" ? REVISION_CANCELLED_MESSAGE : CANCELLED_MESSAGE;
        return { success: true, message, data: presentArticle(article, project) };
      },
      { detail: { summary: "Cancel a queued, batching, writing or polishing article: it fails, unfinished words are given back, no webhook; on a finished article, its section revision under way (422 once ended otherwise)", tags: TAGS } },
    );
