// The article operations of the public API, once: what `/v1/articles` (HTTP, routes/articles.ts)
// and `articles.api.v1.ArticleService` (gRPC, grpc/article-service.ts) both run. Each takes the
// caller the gates let through and the public shape of its input; the two surfaces only
// translate to and from it, so project access, idempotency, the word reservation and every field
// check have one implementation.
import { Code, ConnectError } from "@connectrpc/connect";
import type { Article } from "../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import type { Logger } from "../../../services/kit/src/logger.ts";
import { notFoundError } from "../errors.ts";
import type { Caller, V1Gate } from "../plugins/caller.ts";
import type { ArticleMemory } from "./article-memory.ts";
import { cancelArticle } from "./cancellation.ts";
import { ArticleCreation, type CreatedArticle } from "./create-article.ts";
import { estimateArticle } from "./estimate.ts";
import type { ArticleEventHub, WatchStart } from "./event-stream.ts";
import type { OpenStreams } from "./open-streams.ts";
import type { ArticleListQuery } from "./reading.ts";
import { decodeCursor, encodeCursor } from "./list-cursor.ts";
import { timestampFromMs, timestampMs } from "@bufbuild/protobuf/wkt";
import { articleIdentifier, canonicalIdentifier } from "../../../services/kit/src/rules/identifiers.ts";
import { pageMeta } from "../../../services/kit/src/rules/page-window.ts";
import { stepBreakdown } from "./step-breakdown.ts";
import { ArticleVersions } from "./article-versions.ts";
import { ArticleErasure } from "./article-erasure.ts";
import { ArticleRetry } from "./article-retry.ts";
import { SectionRevisions } from "./section-revisions.ts";
import { exportArticle, exportFormatOf, type ExportedContent } from "./article-export.ts";
import type { ArticleWithProject } from "./article-with-project.ts";

const ARTICLE_NOT_FOUND = "Article not found.";

export interface ArticlePage {
  articles: ArticleWithProject[];
  /** The spec's four integers, and the cursor of the page after this one (null on the last). */
  meta: { current_page: number; last_page: number; per_page: number; total: number; next_cursor: string | null };
}

export class ArticleOperations {
  private readonly creation: ArticleCreation;
  /** The version history, edits and restores (article-versions.ts). */
  readonly versions: ArticleVersions;
  /** Deleting an article and its data (article-erasure.ts). */
  readonly erasure: ArticleErasure;
  /** Retrying a failed article (article-retry.ts). */
  readonly retries: ArticleRetry;
  /** Section operations (section-revisions.ts). */
  readonly revisions: SectionRevisions;

  constructor(
    private readonly gate: V1Gate,
    private readonly remembered: ArticleMemory,
    readonly events: ArticleEventHub,
    private readonly openStreams: OpenStreams,
    logger: Logger,
  ) {
    this.creation = new ArticleCreation(gate, logger);
    this.erasure = new ArticleErasure(gate, (caller, identifier, access) => this.get(caller, identifier, access));
    this.retries = new ArticleRetry(gate, (caller, identifier, access) => this.get(caller, identifier, access));
    this.revisions = new SectionRevisions(gate, (caller, identifier, access) => this.get(caller, identifier, access));
    this.versions = new ArticleVersions(gate, (caller, identifier, access) => this.get(caller, identifier, access), logger);
  }

  /** Creation from the public body (an idempotency key replays the first answer). */
  create(caller: Caller, body: unknown, idempotencyKey: string | undefined): Promise<CreatedArticle> {
    return this.creation.create(caller, body, idempotencyKey);
  }

  estimate(caller: Caller, body: unknown) {
    return estimateArticle(this.gate, caller, body);
  }

  /** The article and its project, when the caller may reach it: 404 outside the caller's reach (another account's), 403 for a project of its reach it may not view or change. */
  async get(caller: Caller, identifier: string, access: "view" | "update" = "view"): Promise<ArticleWithProject> {
    const parsed = articleIdentifier(identifier);
    if (!parsed) throw notFoundError(ARTICLE_NOT_FOUND);
    const canonical = canonicalIdentifier(parsed);
    try {
      const article = await this.remembered.get(canonical, async () => (await this.gate.clients.articles.getArticle({ identifier: canonical })).article!);
      return { article, project: await this.gate.projects.authorize(caller, article.projectId, access) };
    } catch (error) {
      if (error instanceof ConnectError && error.code === Code.NotFound) throw notFoundError(ARTICLE_NOT_FOUND);
      throw error;
    }
  }

  /**
   * A page of the articles of every project the caller can view within its reach (or of the one
   * asked for), newest first: by page number, or after a cursor's place (list-cursor.ts). A project
   * the caller cannot view restricts to nothing, exactly as an empty project does: the answer never
   * tells another account's project from a missing one.
   */
  async list(caller: Caller, query: ArticleListQuery): Promise<ArticlePage> {
    const { status, projectId, unknownStatus, perPage } = query;
    const scope = { accountId: caller.accountId, status, projectId };
    const place = query.cursor === undefined ? undefined : decodeCursor(query.cursor, scope);
    const page = place?.page ?? query.page;
    const viewable = await this.gate.projects.viewable(caller);
    const projects = projectId === undefined ? viewable : viewable.filter((p) => Number(p.id) === projectId);
    if (unknownStatus || projects.length === 0) return { articles: [], meta: { ...pageMeta({ page, perPage }, 0), next_cursor: null } };
    const byId = new Map(projects.map((p) => [p.id, p]));
    // The page's ids, then the records: those remembered from polling, the rest in one read.
    const after = place && { createdAt: timestampFromMs(place.createdAtMs), id: BigInt(place.id) };
    const reply = await this.gate.clients.articles.listArticles({ projectIds: projects.map((p) => p.id), status, page, perPage, idsOnly: true, after });
    const articles = await this.remembered.getMany(reply.articleIds, async (ids) => (await this.gate.clients.articles.batchGetArticles({ ids })).articles);
    // After a place the store says whether more follow; a numbered page has more before the total.
    const more = place ? reply.more : page * perPage < reply.total;
    const last = articles.at(-1);
    const next = more && last ? encodeCursor({ createdAtMs: timestampMs(last.createdAt!), id: Number(last.id), page: page + 1 }, scope) : null;
    return { articles: articles.map((article) => ({ article, project: byId.get(article.projectId)! })), meta: { ...pageMeta({ page, perPage }, reply.total), next_cursor: next } };
  }

  async cancel(caller: Caller, identifier: string): Promise<ArticleWithProject> {
    const { article, project } = await this.get(caller, identifier, "update");
    // A finished article's cancel stops its section revision under way; without one it is refused as before.
    if (article.status === "completed" || article.status === "published") {
      const { revision } = await this.gate.clients.revisions.cancelRevision({ externalId: article.externalId });
      if (revision) return { article, project };
    }
    return { article: await cancelArticle(this.gate.clients.lifecycle, article), project };
  }

  /** The current content in an export format (article-export.ts); view access. */
  async exportContent(caller: Caller, identifier: string, format: string | null | undefined): Promise<ExportedContent> {
    const wanted = exportFormatOf(format);
    const { article } = await this.get(caller, identifier);
    return exportArticle(article, wanted);
  }

  async steps(caller: Caller, identifier: string) {
    const { article } = await this.get(caller, identifier);
    return stepBreakdown(this.gate.clients.costs, article);
  }

  /**
   * Where a watch starts: the log's position first, then the record, so an event between the two
   * is sent, not lost. The watch holds one of the account's open streams (429 past its plan's cap)
   * until the stream ends.
   */
  async watch(caller: Caller, identifier: string, lastEventId: string | undefined): Promise<WatchStart> {
    const { article } = await this.get(caller, identifier);
    const { externalId } = article;
    const lease = await this.openStreams.acquire(caller.accountId, caller.plan.caps?.openEventStreams);
    try {
      const latestId = lastEventId ?? (await this.events.latestEventId(externalId));
      const current = (await this.gate.clients.articles.getArticle({ identifier: externalId })).article!;
      const release = () => lease.release();
      if (lastEventId) return { externalId, current, from: { lastEventId }, release };
      return { externalId, current, from: { latestId: await this.events.startingId(externalId, latestId, current) }, release };
    } catch (error) {
      lease.release();
      throw error;
    }
  }
}
