// The dashboard's articles: the operations /v1/articles runs (article-operations.ts), for the
// signed-in user on the selected account, in the same JSON; live progress over the same event
// stream (an EventSource sends the session cookie, and nothing else, on the dashboard's origin).
import { Elysia } from "elysia";
import type { ArticleOperations } from "../articles/article-operations.ts";
import { articlePageResponse, articleResponse } from "../articles/presented-json.ts";
import { lastEventIdOf } from "../articles/event-stream.ts";
import { CANCELLED_MESSAGE } from "../articles/cancellation.ts";
import { listQueryOf } from "../articles/reading.ts";
import type { V1Gate } from "../plugins/caller.ts";
import { queryValues } from "../validation.ts";
import { presentArticle } from "../../../services/kit/src/public-article.ts";
import { sessionCaller, signedIn } from "./dashboard-session.ts";
import { DASHBOARD_PATH } from "./session-cookie.ts";

const ARTICLES = `${DASHBOARD_PATH}/api/articles`;

export const dashboardArticles = (gate: V1Gate, articles: ArticleOperations) => {
  // The article endpoints' rate limit, shared with /v1/articles.
  const caller = (session: Parameters<typeof sessionCaller>[1]) => sessionCaller(gate, session, "articles");
  return new Elysia({ name: "dashboard-articles" })
    .use(signedIn(gate.clients))
    .get(ARTICLES, async ({ session, request }) => {
      const page = await articles.list(await caller(session), listQueryOf(queryValues(request.url)));
      return articlePageResponse(page.articles, page.meta);
    })
    .post(ARTICLES, async ({ session, body, set }) => {
      const created = await articles.create(await caller(session), body, undefined);
      set.status = 201;
      return { success: true, data: presentArticle(created.article, created.project) };
    })
    .get(`${ARTICLES}/:id`, async ({ session, params }) => articleResponse(await articles.get(await caller(session), params.id)))
    .get(`${ARTICLES}/:id/steps`, async ({ session, params }) => ({ success: true, data: await articles.steps(await caller(session), params.id) }))
    .get(`${ARTICLES}/:id/events`, async ({ session, params, request }) => articles.events.open(await articles.watch(await caller(session), params.id, lastEventIdOf(request.headers))))
    .post(`${ARTICLES}/:id/cancel`, async ({ session, params }) => {
      const { article, project } = await articles.cancel(await caller(session), params.id);
      return { success: true, message: CANCELLED_MESSAGE, data: presentArticle(article, project) };
    });
};
