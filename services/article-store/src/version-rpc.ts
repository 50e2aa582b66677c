// gRPC handlers of an article's version history (articles/article_store/v1/versions.proto).
import type { ConnectRouter } from "@connectrpc/connect";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ArticleSchema, ArticleSourceSchema } from "../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import { ArticleVersionService, type ArticleVersionSchema } from "../../../proto/gen/articles/article_store/v1/versions_pb.ts";
import type { Db } from "./db/client.ts";
import type { ArticleSource } from "./db/schema.ts";
import type { ArticleRecord } from "./domain/articles.ts";
import * as versions from "./domain/article-versions.ts";

/** The translations rpc.ts makes of an article and a source. */
export interface RecordMessages {
  articleMessage(a: ArticleRecord): MessageInitShape<typeof ArticleSchema>;
  sourceMessage(s: ArticleSource): MessageInitShape<typeof ArticleSourceSchema>;
}

const opt = <T>(v: T | null) => (v === null ? undefined : v);

/** A version as the messages carry it; its content only when asked for. */
export function versionMessage(sourceMessage: RecordMessages["sourceMessage"], v: versions.VersionSummary & { content?: string }, withContent = false): MessageInitShape<typeof ArticleVersionSchema> {
  return {
    id: BigInt(v.id),
    number: v.number,
    kind: v.kind,
    wordCount: v.wordCount,
    createdAt: timestampFromDate(v.createdAt),
    madeByKeyId: v.madeByKeyId === null ? undefined : BigInt(v.madeByKeyId),
    madeByWorkload: opt(v.madeByWorkload),
    restoredFrom: opt(v.restoredFrom),
    content: withContent ? v.content : undefined,
    description: opt(v.description),
    sources: v.sources.map(sourceMessage),
    citationsRemoved: v.citationsRemoved,
    aiDetectionScore: opt(v.aiDetectionScore),
    originalityCheckedAt: v.originalityCheckedAt ? timestampFromDate(v.originalityCheckedAt) : undefined,
    quality: opt(v.quality),
    revision: v.revision
      ? { number: v.revision.number, action: v.revision.action, sectionIndex: v.revision.sectionIndex, sectionHeading: v.revision.sectionHeading, instruction: opt(v.revision.instruction), language: opt(v.revision.language) }
      : undefined,
  };
}

export function articleVersionRoutes(router: ConnectRouter, db: Db, { articleMessage, sourceMessage }: RecordMessages): void {
  const changed = (made: { article: ArticleRecord; version: versions.VersionSummary }) => ({ article: articleMessage(made.article), version: versionMessage(sourceMessage, made.version) });
  router.service(ArticleVersionService, {
    async listVersions(req) {
      const listed = await versions.listVersions(db, req.externalId);
      return { article: articleMessage(listed.article), versions: listed.versions.map((v) => versionMessage(sourceMessage, v)) };
    },
    async getVersion(req) {
      const found = await versions.getVersion(db, req.externalId, req.number);
      return { article: articleMessage(found.article), version: versionMessage(sourceMessage, found.version, true) };
    },
    restoreVersion: async (req) =>
      changed(await versions.restoreVersion(db, req.externalId, req.number, req.baseVersionId === undefined ? undefined : Number(req.baseVersionId), { keyId: Number(req.keyId) })),
    editArticle: async (req) =>
      changed(
        await versions.editArticle(
          db,
          req.externalId,
          { baseVersionId: Number(req.baseVersionId), content: req.content, description: req.clearDescription ? null : req.description },
          { keyId: Number(req.keyId) },
        ),
      ),
  });
}
