// Article endpoints (spec 4.1–4.3): create, list, retrieve; and the estimate before creating and
// the cost breakdown per step. All share the "articles" rate limit.
import { Elysia } from "elysia";
import { Code, ConnectError } from "@connectrpc/connect";
import type { Project } from "../../../proto/gen/articles/accounts_billing/v1/accounts_pb.ts";
import type { Article } from "../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import type { Logger } from "../../../services/kit/src/logger.ts";
import { ArticleCreation } from "../articles/create-article.ts";
import { estimateArticle } from "../articles/estimate.ts";
import { stepBreakdown } from "../articles/step-breakdown.ts";
import { articleJson, JSON_CONTENT_TYPE } from "../articles/presented-json.ts";
import { lastEventIdOf, type ArticleEventHub } from "../articles/event-stream.ts";
import { cancelArticle, CANCELLED_MESSAGE } from "../articles/cancellation.ts";
import type { ArticleMemory } from "../articles/article-memory.ts";
import { idempotencyKeyOf, REPLAYED_HEADER } from "../articles/idempotency.ts";
import { listQueryOf, isArticleIdentifier } from "../articles/reading.ts";
import { notFoundError } from "../errors.ts";
import type { Caller, V1Gate } from "../plugins/caller.ts";
import { v1Gate } from "../plugins/v1-gate.ts";
import { queryValues } from "../validation.ts";
import { presentArticle } from "../../../services/kit/src/public-article.ts";

const TAGS = ["Articles"];
const ARTICLE_NOT_FOUND = "Article not found.";

const creationMessage = (article: Article) =>
  article.status === "batching" ? "Article created and submitted for batch generation." : "Article created and queued for generation.";

export const articleRoutes = (gate: V1Gate, remembered: ArticleMemory, logger: Logger, events: ArticleEventHub) => {
  const { clients } = gate;
  const creation = new ArticleCreation(gate, logger);

  /** The article and its project, when the caller may view it: 404 for another account's, 403 for a project out of reach. */
  async function viewableArticle(caller: Caller, identifier: string, access: "view" | "update" = "view"): Promise<{ article: Article; project: Project }> {
    if (!isArticleIdentifier(identifier)) throw notFoundError(ARTICLE_NOT_FOUND);
    try {
      const article = await remembered.get(identifier, async () => (await clients.articles.getArticle({ identifier })).article!);
      return { article, project: await gate.projects.authorize(caller.userId, article.projectId, access) };
    } catch (error) {
      if (error instanceof ConnectError && error.code === Code.NotFound) throw notFoundError(ARTICLE_NOT_FOUND);
      throw error;
    }
  }

  return new Elysia({ name: "article-routes" })
    .use(v1Gate(gate, "articles"))
    .post(
      "/v1/articles",
      async ({ caller, body, request, set }) => {
        const created = await creation.create(caller, body, idempotencyKeyOf(request.headers));
        set.status = 201;
        if (created.replayed) set.headers[REPLAYED_HEADER] = "true";
        return { success: true, message: creationMessage(created.article), data: presentArticle(created.article, created.project) };
      },
      { detail: { summary: "Create an article and start its generation (Idempotency-Key supported)", tags: TAGS } },
    )
    .post(
      "/v1/articles/estimate",
      async ({ caller, body }) => ({ success: true, data: await estimateArticle(gate, caller, body) }),
      { detail: { summary: "Check a creation body as creation does and estimate its words and cost; creates and reserves nothing", tags: TAGS } },
    )
    .get(
      "/v1/articles",
      async ({ caller, request, set }) => {
        const { status, projectId, page, perPage } = listQueryOf(queryValues(request.url));
        const projects = projectId === undefined
          ? await gate.projects.viewable(caller.userId)
          : [await gate.projects.authorize(caller.userId, projectId, "view")];
        const byId = new Map(projects.map((p) => [p.id, p]));
        // The page's ids, then the records: those remembered from polling, the rest in one read.
        const reply = await clients.articles.listArticles({ projectIds: projects.map((p) => p.id), status, page, perPage, idsOnly: true });
        const articles = await remembered.getMany(reply.articleIds, async (ids) => (await clients.articles.batchGetArticles({ ids })).articles);
        const meta = { current_page: page, last_page: Math.max(1, Math.ceil(reply.total / perPage)), per_page: perPage, total: reply.total };
        set.headers["content-type"] = JSON_CONTENT_TYPE;
        return `{"success":true,"data":[${articles.map((a) => articleJson(a, byId.get(a.projectId)!)).join(",")}],"meta":${JSON.stringify(meta)}}`;
      },
      { detail: { summary: "List articles of every project the caller can view, newest first", tags: TAGS } },
    )
    .get(
      "/v1/articles/:id",
      async ({ caller, params, set }) => {
        const { article, project } = await viewableArticle(caller, params.id);
        set.headers["content-type"] = JSON_CONTENT_TYPE;
        return `{"success":true,"data":${articleJson(article, project)}}`;
      },
      { detail: { summary: "Retrieve an article by numeric id or external_id (poll this)", tags: TAGS } },
    )
    .get(
      "/v1/articles/:id/steps",
      async ({ caller, params }) => {
        const { article } = await viewableArticle(caller, params.id);
        return { success: true, data: await stepBreakdown(clients.costs, article) };
      },
      { detail: { summary: "Cost breakdown of an article's run: each step, the research, the images and the finishing pass", tags: TAGS } },
    )
    .get(
      "/v1/articles/:id/events",
      async ({ caller, params, request }) => {
        const lastEventId = lastEventIdOf(request.headers);
        const { article } = await viewableArticle(caller, params.id);
        // The log's position first, then the record: an event between the two is sent, not lost.
        const latestId = lastEventId ?? (await events.latestEventId(article.externalId));
        const current = (await clients.articles.getArticle({ identifier: article.externalId })).article!;
        return events.open(article.externalId, current, lastEventId ? { lastEventId } : { latestId });
      },
      { detail: { summary: "Live progress as Server-Sent Events: state changes, steps, sources, images, then completed, published or failed (Last-Event-ID resumes)", tags: TAGS } },
    )
    .post(
      "/v1/articles/:id/cancel",
      async ({ caller, params }) => {
        const { article, project } = await viewableArticle(caller, params.id, "update");
        return { success: true, message: CANCELLED_MESSAGE, data: presentArticle(await cancelArticle(clients.lifecycle, article), project) };
      },
      { detail: { summary: "Cancel a queued, batching, writing or polishing article: it fails, unfinished words are given back, no webhook (422 once ended otherwise)", tags: TAGS } },
    );
};
