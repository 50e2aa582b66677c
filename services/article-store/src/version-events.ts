// Each version a client's change adds (an edit, a restore, a section revision) is a `version_created` event on the
// article's log, written after the change committed, as article-event-log.ts writes the ends of a
// run: the article has ended, so the event goes to its ended log and the log to the archive. Never
// a delivery to the article's webhook_url. A failure here is logged and never fails the change.
import type { Interceptor } from "@connectrpc/connect";
import { ArticleVersionService, type EditArticleResponse } from "../../../proto/gen/articles/article_store/v1/versions_pb.ts";
import { ArticleRevisionService } from "../../../proto/gen/articles/article_store/v1/revisions_pb.ts";
import type { ArticleEvent } from "../../kit/src/article-events.ts";
import type { Logger } from "../../kit/src/logger.ts";
import { within } from "../../kit/src/deadline.ts";
import { appendToEndedLog, archiveArticleLogs, type LogArchive } from "./log-archiver.ts";

/** The calls that add a version after generation: an edit, a restore, a section revision's completion. */
export const VERSION_CHANGES = new Set([ArticleVersionService.method.restoreVersion, ArticleVersionService.method.editArticle, ArticleRevisionService.method.completeRevision].map((m) => `${m.parent.typeName}/${m.name}`));

const WRITE_TIMEOUT_MS = 2_000;

/** The event of a new version (RestoreVersion, EditArticle and CompleteRevision answer the same shape). */
export function versionCreatedEvent({ article, version }: Pick<EditArticleResponse, "article" | "version">): ArticleEvent {
  return {
    event: "version_created",
    data: {
      version_id: Number(version!.id),
      number: version!.number,
      kind: version!.kind,
      word_count: version!.wordCount,
      made_by_key_id: version!.madeByKeyId === undefined ? null : Number(version!.madeByKeyId),
      restored_from: version!.restoredFrom ?? null,
      current_version_id: Number(article!.currentVersionId),
      published_version_id: article!.publishedVersionId === undefined ? null : Number(article!.publishedVersionId),
    },
  };
}

export function logNewVersions(archive: LogArchive, logger: Logger): Interceptor {
  return (next) => async (req) => {
    const res = await next(req);
    if (res.stream || !VERSION_CHANGES.has(`${req.service.typeName}/${req.method.name}`)) return res;
    const made = res.message as unknown as EditArticleResponse;
    if (!made.article || !made.version) return res;
    const logged = { id: Number(made.article.id), externalId: made.article.externalId };
    const warn = (error: Error) => logger.warn("could not log a new version of an article", { externalId: logged.externalId, error: error.message });
    // Not held up past the timeout: the write goes on until it lands, and the archive follows it.
    const archived = appendToEndedLog(archive, logged, [versionCreatedEvent(made)], warn).then(() => archiveArticleLogs(archive, [logged]).then(() => undefined, warn));
    await within(archived, WRITE_TIMEOUT_MS).catch(() => undefined);
    return res;
  };
}
