// articles.api.v1.ArticleService: the public article API over gRPC for internal teams. Each method
// passes the same gates as /v1 (API key in the `authorization` metadata, subscription, the
// "articles" rate limit) and runs the same operation (articles/article-operations.ts); it only
// translates between the proto messages and the public JSON shape, whose wire names the messages
// share, so proto3's JSON mapping is the translation.
import { toJson, type JsonObject, type MessageInitShape } from "@bufbuild/protobuf";
import type { ConnectRouter } from "@connectrpc/connect";
import {
  ArticleInputSchema,
  ArticleService,
  type ArticleInput,
  WatchArticleResponseSchema,
} from "../../../proto/gen/articles/api/v1/articles_pb.ts";
import { PublishingService } from "../../../proto/gen/articles/api/v1/publishing_pb.ts";
import { isStreamId } from "../../../services/kit/src/article-events.ts";
import type { ArticleOperations } from "../articles/article-operations.ts";
import { listQueryOf } from "../articles/reading.ts";
import { validationError } from "../errors.ts";
import { pageMetaOf, queryNumber, type PublicCalls } from "./public-calls.ts";
import { apiArticle } from "./api-article.ts";
import { publishBody } from "./publishing-service.ts";
import { articleVersionMethods } from "./article-version-methods.ts";

const BUCKET = "articles";
const PUBLISH_ARTICLE = `${PublishingService.typeName}/${PublishingService.method.publishArticle.name}`;
// Ids the public body takes as JSON numbers; proto3's JSON mapping writes int64 as strings.
const ID_FIELDS = ["project_id", "brand_voice_id", "image_preset_id"] as const;

/** The creation body /v1 takes, from the proto message. */
export function creationBody(input: ArticleInput | undefined): JsonObject {
  if (!input) return {};
  const body = toJson(ArticleInputSchema, { ...input, publish: undefined }, { useProtoFieldName: true }) as JsonObject;
  for (const field of ID_FIELDS) if (typeof body[field] === "string") body[field] = Number(body[field]);
  // The oneof's "no audience" is the body's explicit null; an exclusion list set empty excludes nothing.
  if (input.audience.case === "noTargetAudience") {
    delete body.no_target_audience;
    if (input.audience.value) body.target_audience = null;
  }
  if (input.researchExcludeDomains) body.research_exclude_domains = [...input.researchExcludeDomains.domains];
  // As POST /v1/articles/{id}/publish's body (its times and term lists written as /v1 takes them).
  if (input.publish) body.publish = publishBody(input.publish);
  return body;
}

/** A google.protobuf.Struct field (a plain JSON object in the generated code) holding the public JSON as /v1 answers it. */
const struct = (value: unknown) => JSON.parse(JSON.stringify(value)) as JsonObject;

export function articleService(router: ConnectRouter, calls: PublicCalls, articles: ArticleOperations): void {
  const { answer } = calls;
  const callerOf = calls.callerOf(BUCKET);

  router.service(ArticleService, {
    createArticle: (req, ctx) =>
      answer("CreateArticle", async () => {
        // A creation that publishes on completion does what PublishArticle does.
        const caller = await callerOf(ctx, req.article?.publish ? [PUBLISH_ARTICLE] : []);
        const created = await articles.create(caller, creationBody(req.article), req.idempotencyKey);
        return { article: apiArticle(created.article, created.project), replayed: created.replayed };
      }),
    getArticle: (req, ctx) =>
      answer("GetArticle", async () => {
        const { article, project } = await articles.get(await callerOf(ctx), req.id);
        return { article: apiArticle(article, project) };
      }),
    listArticles: (req, ctx) =>
      answer("ListArticles", async () => {
        const caller = await callerOf(ctx);
        const query = listQueryOf({ status: req.status, project_id: queryNumber(req.projectId), page: queryNumber(req.page), per_page: queryNumber(req.perPage), cursor: req.cursor });
        const page = await articles.list(caller, query);
        return { articles: page.articles.map((a) => apiArticle(a.article, a.project)), meta: { ...pageMetaOf(page.meta), nextCursor: page.meta.next_cursor ?? undefined } };
      }),
    cancelArticle: (req, ctx) =>
      answer("CancelArticle", async () => {
        const { article, project } = await articles.cancel(await callerOf(ctx), req.id);
        return { article: apiArticle(article, project) };
      }),
    estimateArticle: (req, ctx) =>
      answer("EstimateArticle", async () => ({ estimate: struct(await articles.estimate(await callerOf(ctx), creationBody(req.article))) })),
    getArticleSteps: (req, ctx) => answer("GetArticleSteps", async () => ({ breakdown: struct(await articles.steps(await callerOf(ctx), req.id)) })),
    ...articleVersionMethods(answer, callerOf, articles),
    async *watchArticle(req, ctx) {
      const start = await answer("WatchArticle", async () => {
        if (req.lastEventId !== undefined && !isStreamId(req.lastEventId)) {
          throw validationError({ last_event_id: ['last_event_id must be the id of an event of this article, e.g. "1718000000000-0".'] });
        }
        return articles.watch(await callerOf(ctx), req.id, req.lastEventId);
      });
      yield* watchedEvents(articles, start, ctx.signal);
    },
  });
}

/** The article's events as a stream that ends after the final one, or when the client goes. */
async function* watchedEvents(articles: ArticleOperations, start: Awaited<ReturnType<ArticleOperations["watch"]>>, signal: AbortSignal): AsyncGenerator<MessageInitShape<typeof WatchArticleResponseSchema>> {
  const queue: MessageInitShape<typeof WatchArticleResponseSchema>[] = [];
  let ended = false;
  let wake: (() => void) | undefined;
  const stop = articles.events.subscribe(start, {
    event: (id, event, data) => {
      // data_json is the stream's data line itself: Struct turns every number into a double.
      queue.push({ id, event, data: struct(data), dataJson: JSON.stringify(data) });
      wake?.();
    },
    close: () => {
      ended = true;
      wake?.();
    },
  });
  const onAbort = () => stop();
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    for (;;) {
      while (queue.length > 0) yield queue.shift()!;
      if (ended || signal.aborted) return;
      await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
    }
  } finally {
    signal.removeEventListener("abort", onAbort);
    stop();
  }
}
