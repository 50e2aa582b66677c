// gRPC handlers of section revisions (articles/article_store/v1/revisions.proto). A revision
// recorded wakes the outbox relay, so its job goes at once rather than at the next poll.
import type { ConnectRouter } from "@connectrpc/connect";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { ArticleRevisionService, type SectionRevisionSchema } from "../../../proto/gen/articles/article_store/v1/revisions_pb.ts";
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
      const made = await revisions.completeRevision(db, req.externalId, req.number, { text: req.sectionText, heading: req.sectionHeading, writtenWords: req.writtenWords });
      return { article: messages.articleMessage(made.article), version: versionMessage(messages.sourceMessage, made.version), revision: revisionMessage(made.revision) };
    },
    async failRevision(req) {
      return { revision: revisionMessage(await revisions.failRevision(db, req.externalId, req.number, req.reason)) };
    },
  });
}
