// gRPC handlers of section revisions (articles/article_store/v1/revisions.proto). A revision
// recorded wakes the outbox relay, so its job goes at once rather than at the next poll. Its run's
// start (each pickup by the runner), completion, failure and cancel are `revision` events on the
// article's log, written after the call as version-events.ts writes versions: bounded, a failure
// logged; a cancel is also announced to the runners, as an article's cancel is.
import type { ConnectRouter, Interceptor } from "@connectrpc/connect";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { ArticleRevisionService, type SectionRevision, type SectionRevisionSchema } from "../../../proto/gen/articles/article_store/v1/revisions_pb.ts";
import { articleCancelsChannel, type ArticleEvent } from "../../kit/src/article-events.ts";
import type { Logger } from "../../kit/src/logger.ts";
import { within } from "../../kit/src/deadline.ts";
import { getArticleByExternalId } from "./domain/articles.ts";
import { appendToEndedLog, type LogArchive } from "./log-archiver.ts";
import type { Db } from "./db/client.ts";
import * as revisions from "./domain/section-revisions.ts";
import { versionMessage, type RecordMessages } from "./version-rpc.ts";

const opt = <T>(v: T | null) => (v === null ? undefined : v);

function revisionMessage(r: revisions.RevisionRecord): MessageInitShape<typeof SectionRevisionSchema> {
  return {
    number: r.number,
    reference: r.reference,
    status: r.status,
    action: r.action,
    sectionIndex: r.sectionIndex,
    sectionHeading: r.sectionHeading,
    instruction: opt(r.instruction),
    targetWords: opt(r.targetWords),
    language: opt(r.language),
    reservedWords: r.reservedWords,
    keyId: r.keyId === null ? undefined : BigInt(r.keyId),
    versionId: r.versionId === null ? undefined : BigInt(r.versionId),
    failureReason: opt(r.failureReason),
    writtenWords: opt(r.writtenWords),
    createdAt: timestampFromDate(r.createdAt),
    finishedAt: r.finishedAt ? timestampFromDate(r.finishedAt) : undefined,
  };
}

const orNull = <T>(v: T | undefined) => (v === undefined ? null : v);

export function sectionRevisionRoutes(router: ConnectRouter, db: Db, messages: RecordMessages, wakeRelay: () => void): void {
  router.service(ArticleRevisionService, {
    async createRevision(req) {
      const made = await revisions.createRevision(db, req.externalId, {
        reference: req.reference,
        action: req.action,
        sectionIndex: req.sectionIndex,
        sectionHeading: req.sectionHeading,
        instruction: orNull(req.instruction),
        targetWords: orNull(req.targetWords),
        language: orNull(req.language),
        reservedWords: req.reservedWords,
        keyId: Number(req.keyId),
        idempotencyKey: orNull(req.idempotencyKey),
        requestHash: orNull(req.requestHash),
      });
      if (!made.replayed) wakeRelay();
      return { article: messages.articleMessage(made.article), revision: revisionMessage(made.revision), replayed: made.replayed };
    },
    async listRevisions(req) {
      return { revisions: (await revisions.listRevisions(db, req.externalId)).map(revisionMessage) };
    },
    async pendingRevision(req) {
      const pending = await revisions.pendingRevision(db, req.externalId);
      return { revision: pending ? revisionMessage(pending) : undefined };
    },
    async completeRevision(req) {
      const made = await revisions.completeRevision(db, req.externalId, req.number, { text: req.sectionText, heading: req.sectionHeading, writtenWords: req.writtenWords, cost: req.cost });
      return { article: messages.articleMessage(made.article), version: versionMessage(messages.sourceMessage, made.version), revision: revisionMessage(made.revision) };
    },
    async failRevision(req) {
      return { revision: revisionMessage(await revisions.failRevision(db, req.externalId, req.number, req.reason)) };
    },
    async cancelRevision(req) {
      const cancelled = await revisions.cancelRevision(db, req.externalId);
      return { revision: cancelled ? revisionMessage(cancelled) : undefined };
    },
  });
}

const WRITE_TIMEOUT_MS = 2_000;
const LOGGED = new Set<string>(
  [ArticleRevisionService.method.pendingRevision, ArticleRevisionService.method.completeRevision, ArticleRevisionService.method.failRevision, ArticleRevisionService.method.cancelRevision].map((m) => m.name),
);

function revisionEvent(r: SectionRevision): ArticleEvent {
  return {
    event: "revision",
    data: {
      number: r.number,
      status: r.status,
      action: r.action,
      section_index: r.sectionIndex,
      section_heading: r.sectionHeading,
      version_id: r.versionId === undefined ? null : Number(r.versionId),
      failure_reason: r.failureReason ?? null,
    },
  };
}

export function logRevisions(archive: LogArchive, logger: Logger): Interceptor {
  return (next) => async (req) => {
    const res = await next(req);
    if (req.service.typeName !== ArticleRevisionService.typeName || res.stream || !LOGGED.has(req.method.name)) return res;
    const { revision } = res.message as unknown as { revision?: SectionRevision };
    const { externalId } = req.message as unknown as { externalId: string };
    if (!revision) return res;
    const warn = (error: Error) => logger.warn("could not log a section revision", { externalId, error: error.message });
    const write = async () => {
      const article = await getArticleByExternalId(archive.db, externalId);
      // A cancel reaches the runner as an article's cancel does: it aborts the revision's call.
      if (req.method.name === ArticleRevisionService.method.cancelRevision.name) await archive.redis.publish(articleCancelsChannel(archive.redisPrefix), article.externalId);
      // Not held up past the timeout: the log's write goes on until it lands.
      await appendToEndedLog(archive, { id: article.id, externalId: article.externalId }, [revisionEvent(revision)], warn);
    };
    await within(write(), WRITE_TIMEOUT_MS).catch(warn);
    return res;
  };
}
