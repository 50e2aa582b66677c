// Publications and publish options between their proto messages and the records kept on the
// article (jsonb: times as ISO 8601 strings, unset fields as null).
import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type {
  AutoPublish as AutoPublishMessage,
  PublicationAttempt as AttemptMessage,
  Publication as PublicationMessage,
  PublicationSchema,
  PublishOptionsSchema,
} from "../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import { publishOptionsRecord } from "../../kit/src/publish-options.ts";
import type { PublishOptionsRecord } from "../../kit/src/queues.ts";
import type { AutoPublish, Publication, PublicationAttempt } from "./db/schema.ts";

const iso = (t: { seconds: bigint; nanos: number } | undefined) => (t ? timestampDate(t as Parameters<typeof timestampDate>[0]).toISOString() : null);
const stamp = (value: string) => timestampFromDate(new Date(value));
const opt = <T>(v: T | null) => (v === null ? undefined : v);

export const publishOptionsMessage = (o: PublishOptionsRecord): MessageInitShape<typeof PublishOptionsSchema> => ({
  status: opt(o.status),
  publishAt: o.publishAt ? stamp(o.publishAt) : undefined,
  categories: o.categories ? { names: o.categories } : undefined,
  tags: o.tags ? { names: o.tags } : undefined,
  slug: opt(o.slug),
});

export const autoPublishOf = (a: AutoPublishMessage | undefined): AutoPublish | null =>
  a ? { destinationId: Number(a.destinationId), options: publishOptionsRecord(a.options) } : null;

export const autoPublishMessage = (a: AutoPublish | null | undefined) =>
  a ? { destinationId: BigInt(a.destinationId), options: publishOptionsMessage(a.options) } : undefined;

export const attemptOf = (a: AttemptMessage): PublicationAttempt => ({
  attempt: a.attempt,
  attemptedAt: iso(a.attemptedAt) ?? new Date().toISOString(),
  outcome: a.outcome as PublicationAttempt["outcome"],
  statusCode: a.statusCode ?? null,
  error: a.error ?? null,
  durationMs: a.durationMs,
  versionId: Number(a.versionId),
});

/** The publication a RecordPublication call states (its attempts come separately). */
export const publicationOf = (p: PublicationMessage | undefined): Omit<Publication, "attempts"> => {
  const now = new Date().toISOString();
  return {
    destinationId: Number(p?.destinationId ?? 0),
    destinationKind: p?.destinationKind ?? "",
    state: (p?.state ?? "") as Publication["state"],
    remoteId: p?.remoteId ?? null,
    remoteUrl: p?.remoteUrl ?? null,
    remoteStatus: p?.remoteStatus ?? null,
    versionId: p?.versionId === undefined ? null : Number(p.versionId),
    error: p?.error ?? null,
    requestedAt: iso(p?.requestedAt) ?? now,
    updatedAt: now,
  };
};

export const publicationMessage = (p: Publication): MessageInitShape<typeof PublicationSchema> => ({
  destinationId: BigInt(p.destinationId),
  destinationKind: p.destinationKind,
  state: p.state,
  remoteId: opt(p.remoteId),
  remoteUrl: opt(p.remoteUrl),
  remoteStatus: opt(p.remoteStatus),
  versionId: p.versionId === null ? undefined : BigInt(p.versionId),
  error: opt(p.error),
  attempts: p.attempts.map((a) => ({
    attempt: a.attempt,
    attemptedAt: stamp(a.attemptedAt),
    outcome: a.outcome,
    statusCode: opt(a.statusCode),
    error: opt(a.error),
    durationMs: a.durationMs,
    versionId: BigInt(a.versionId),
  })),
  requestedAt: stamp(p.requestedAt),
  updatedAt: stamp(p.updatedAt),
});
