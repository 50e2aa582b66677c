// articles.api.v1.ArticleService's methods of an article after generation: its versions, a restore,
// an edit and a section revision, running the operations /v1 runs (articles/article-versions.ts) and translating the
// public JSON to the messages by proto3's JSON mapping, as the other methods do.
import { fromJson, type JsonValue } from "@bufbuild/protobuf";
import { ArticleRevisionSchema, ArticleVersionSchema } from "../../../proto/gen/articles/api/v1/articles_pb.ts";
import type { HandlerContext } from "@connectrpc/connect";
import type { ArticleOperations } from "../articles/article-operations.ts";
import { presentVersion } from "../articles/article-versions.ts";
import { ERASED_MESSAGE } from "../articles/article-erasure.ts";
import { retriedMessage } from "../articles/article-retry.ts";
import { presentRevision } from "../articles/section-revisions.ts";
import type { SectionRevision } from "../../../proto/gen/articles/article_store/v1/revisions_pb.ts";
import type { Article } from "../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import type { ArticleVersion } from "../../../proto/gen/articles/article_store/v1/versions_pb.ts";
import type { Caller } from "../plugins/caller.ts";
import type { PublicCalls } from "./public-calls.ts";
import { apiArticle } from "./api-article.ts";

const apiVersion = (version: ArticleVersion, article: Article) =>
  fromJson(ArticleVersionSchema, presentVersion(version, article) as unknown as JsonValue, { ignoreUnknownFields: true });

const apiRevision = (revision: SectionRevision) => {
  const { section, ...rest } = presentRevision(revision);
  return fromJson(ArticleRevisionSchema, { ...rest, section_index: section.index, section_heading: section.heading } as unknown as JsonValue, { ignoreUnknownFields: true });
};

export function articleVersionMethods(answer: PublicCalls["answer"], callerOf: (ctx: HandlerContext) => Promise<Caller>, articles: ArticleOperations) {
  const { versions } = articles;
  return {
    listArticleVersions: (req: { id: string }, ctx: HandlerContext) =>
      answer("ListArticleVersions", async () => {
        const listed = await versions.list(await callerOf(ctx), req.id);
        return { versions: listed.versions.map((v) => apiVersion(v, listed.article)) };
      }),
    getArticleVersion: (req: { id: string; version: number }, ctx: HandlerContext) =>
      answer("GetArticleVersion", async () => {
        const found = await versions.get(await callerOf(ctx), req.id, req.version);
        return { version: apiVersion(found.version, found.article) };
      }),
    restoreArticleVersion: (req: { id: string; version: number; baseVersionId?: bigint }, ctx: HandlerContext) =>
      answer("RestoreArticleVersion", async () => {
        const restored = await versions.restore(await callerOf(ctx), req.id, req.version, req.baseVersionId === undefined ? undefined : Number(req.baseVersionId));
        return { article: apiArticle(restored.article, restored.project), versionNumber: restored.version.number };
      }),
    exportArticleContent: (req: { id: string; format?: string }, ctx: HandlerContext) =>
      answer("ExportArticleContent", async () => {
        const exported = await articles.exportContent(await callerOf(ctx), req.id, req.format);
        return { format: exported.format, contentType: exported.contentType, content: exported.content, versionId: exported.etag ? BigInt(exported.etag.slice(1, -1)) : 0n };
      }),
    retryArticle: (req: { id: string }, ctx: HandlerContext) =>
      answer("RetryArticle", async () => {
        const retried = await articles.retries.retry(await callerOf(ctx), req.id);
        return { article: apiArticle(retried.article, retried.project), message: retriedMessage(retried) };
      }),
    reviseArticleSection: (req: { id: string; section: string; action: string; instruction?: string; targetWords?: number; language?: string; idempotencyKey?: string }, ctx: HandlerContext) =>
      answer("ReviseArticleSection", async () => {
        // The body POST /v1/articles/{id}/revisions would get.
        const body = { section: req.section, action: req.action, instruction: req.instruction, target_words: req.targetWords, language: req.language };
        const queued = await articles.revisions.revise(await callerOf(ctx), req.id, body, req.idempotencyKey);
        return { revision: apiRevision(queued.revision), message: `Revision ${queued.revision.number} queued${queued.replayed ? " (replayed)" : ""}.` };
      }),
    listArticleRevisions: (req: { id: string }, ctx: HandlerContext) =>
      answer("ListArticleRevisions", async () => {
        const listed = await articles.revisions.list(await callerOf(ctx), req.id);
        return { sections: listed.sections.map((s) => ({ index: s.index, heading: s.heading, wordCount: s.word_count })), revisions: listed.revisions.map(apiRevision) };
      }),
    deleteArticle: (req: { id: string; unpublish: boolean }, ctx: HandlerContext) =>
      answer("DeleteArticle", async () => {
        await articles.erasure.erase(await callerOf(ctx), req.id, req.unpublish);
        return { success: true, message: ERASED_MESSAGE };
      }),
    updateArticle: (req: { id: string; baseVersionId: bigint; content?: string; description?: string; clearDescription: boolean }, ctx: HandlerContext) =>
      answer("UpdateArticle", async () => {
        // The body PATCH /v1/articles/{id} would get.
        const body: Record<string, unknown> = { base_version_id: req.baseVersionId === 0n ? undefined : Number(req.baseVersionId) };
        if (req.content !== undefined) body.content = req.content;
        if (req.clearDescription) body.description = null;
        else if (req.description !== undefined) body.description = req.description;
        const edited = await versions.edit(await callerOf(ctx), req.id, body, undefined);
        return { article: apiArticle(edited.article, edited.project), versionNumber: edited.version.number };
      }),
  };
}
