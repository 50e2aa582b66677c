// Section operations on a finished article: a revision is recorded on the locked article row with
// an outbox row that queues the article's generation job (the runner finds the revision pending
// and runs it instead of a generation), at most one queued or running at a time. Its completion
// splices the runner's text into the current content between the section's heading line and the
// next H2, so every other byte stays as it was, and adds the version that records it.
import { and, desc, eq, inArray, max } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { articleVersions, outbox, sectionRevisions } from "../db/schema.ts";
import { invalidFields, notFound, precondition, stale, throwIfAny, type FieldErrors } from "../../../kit/src/errors.ts";
import { bodyOf } from "../../../kit/src/article-envelope.ts";
import { articleSections, spliceSection } from "../../../kit/src/rules/article-sections.ts";
import { getArticleByExternalId, updateArticle, type ArticleRecord } from "./articles.ts";
import { checkCost, isDone, onArticle, type VersionRecord } from "./lifecycle.ts";
import { appendVersion, citationsIn, readersWords, withBody } from "./article-versions.ts";

export type RevisionRecord = typeof sectionRevisions.$inferSelect;

export const KEY_REUSED = "This Idempotency-Key was already used with a different request body; use a new key for a different request.";

export interface RevisionRequest {
  reference: string;
  action: string;
  sectionIndex: number;
  sectionHeading: string;
  instruction: string | null;
  targetWords: number | null;
  language: string | null;
  reservedWords: number;
  keyId: number;
  idempotencyKey: string | null;
  requestHash: string | null;
}

const UNDER_WAY: ("queued" | "running")[] = ["queued", "running"];

/** Records a revision and queues the article's job; an idempotency key already used answers its revision (replayed). */
export async function createRevision(db: Db, externalId: string, request: RevisionRequest): Promise<{ article: ArticleRecord; revision: RevisionRecord; replayed: boolean }> {
  return onArticle(db, externalId, async (tx, article) => {
    if (request.idempotencyKey) {
      const [earlier] = await tx.select().from(sectionRevisions).where(and(eq(sectionRevisions.articleId, article.id), eq(sectionRevisions.idempotencyKey, request.idempotencyKey)));
      if (earlier) {
        if (earlier.requestHash !== request.requestHash) throw invalidFields({ idempotency_key: [KEY_REUSED] });
        return { article, revision: earlier, replayed: true };
      }
    }
    if (!isDone(article.status) || article.currentVersionId === null) throw stale(`The article is ${article.status}; only a completed or published article's sections can be revised.`);
    if (!(request.sectionIndex >= 1) || request.sectionHeading === "") throw invalidFields({ section: ["The article has no such H2 section."] });
    const running = await revisionUnderWay(tx, article.id);
    if (running !== undefined) throw stale(`Revision ${running} of this article is still under way; ask again once it has ended.`);
    const [{ last }] = await tx.select({ last: max(sectionRevisions.number) }).from(sectionRevisions).where(eq(sectionRevisions.articleId, article.id));
    const [revision] = await tx
      .insert(sectionRevisions)
      .values({ ...request, keyId: request.keyId > 0 ? request.keyId : null, articleId: article.id, number: (last ?? 0) + 1 })
      .returning();
    await tx.insert(outbox).values({ articleId: article.id, externalId: article.externalId, queue: "generation" });
    return { article, revision: revision!, replayed: false };
  });
}

export async function listRevisions(db: Db, externalId: string): Promise<RevisionRecord[]> {
  const article = await getArticleByExternalId(db, externalId);
  return db.select().from(sectionRevisions).where(eq(sectionRevisions.articleId, article.id)).orderBy(desc(sectionRevisions.number));
}

/** The revision queued or running, marked running: the runner is about to run it. */
export async function pendingRevision(db: Db, externalId: string): Promise<RevisionRecord | undefined> {
  const article = await getArticleByExternalId(db, externalId);
  const [revision] = await db
    .update(sectionRevisions)
    .set({ status: "running" })
    .where(and(eq(sectionRevisions.articleId, article.id), inArray(sectionRevisions.status, UNDER_WAY)))
    .returning();
  return revision;
}

async function lockedRevision(tx: Db, article: ArticleRecord, number: number): Promise<RevisionRecord> {
  const [revision] = await tx.select().from(sectionRevisions).where(and(eq(sectionRevisions.articleId, article.id), eq(sectionRevisions.number, number))).for("update");
  if (!revision) throw notFound("No such revision of this article.");
  return revision;
}

export interface RevisedSection {
  text: string;
  heading?: string;
  writtenWords: number;
  /** The article's cost with the revision's call. */
  cost?: string;
}

/**
 * The revised section spliced into the current version as a new version (kind section_rewrite)
 * that records the section, action and instruction; a repeat answers the version made.
 */
export async function completeRevision(db: Db, externalId: string, number: number, revised: RevisedSection): Promise<{ article: ArticleRecord; version: VersionRecord; revision: RevisionRecord }> {
  const errors: FieldErrors = {};
  checkCost(revised.cost, errors);
  throwIfAny(errors);
  return onArticle(db, externalId, async (tx, article) => {
    const revision = await lockedRevision(tx, article, number);
    if (revision.status === "completed" && revision.versionId !== null) {
      const [version] = await tx.select().from(articleVersions).where(eq(articleVersions.id, revision.versionId));
      return { article, version: version!, revision };
    }
    if (revision.status === "failed") throw precondition(`Revision ${number} failed: ${revision.failureReason ?? "no reason recorded"}.`);
    if (!isDone(article.status) || article.currentVersionId === null) throw precondition(`The article is ${article.status}; its sections cannot be revised.`);
    const [base] = await tx.select().from(articleVersions).where(eq(articleVersions.id, article.currentVersionId));
    if (!base) throw precondition("The article's current version is missing.");
    const body = bodyOf(base.content);
    const section = articleSections(body)[revision.sectionIndex - 1];
    // An edit meanwhile may have moved or removed the section: the revision then has nothing to replace.
    if (!section || section.heading !== revision.sectionHeading) throw precondition(`The section "${revision.sectionHeading}" is no longer section ${revision.sectionIndex} of the article.`);
    const revisedBody = spliceSection(body, section, revised.text, revised.heading);
    const content = withBody(base.content, revisedBody);
    const citations = (article.settings.citations ?? "none") === "none" || base.sources.length === 0 ? { sources: base.sources, unresolved: base.citationsRemoved } : citationsIn(revisedBody, base.sources);
    const made = await appendVersion(
      tx,
      article,
      {
        kind: "section_rewrite",
        content,
        wordCount: readersWords(revisedBody),
        description: base.description,
        sources: citations.sources,
        citationsRemoved: citations.unresolved,
        // The brief checks and the score measured the base's text.
        quality: null,
        aiDetectionScore: null,
        originalityCheckedAt: null,
        restoredFrom: null,
        revision: { number, action: revision.action, sectionIndex: revision.sectionIndex, sectionHeading: revision.sectionHeading, instruction: revision.instruction, language: revision.language },
      },
      { keyId: revision.keyId ?? 0 },
    );
    const [completed] = await tx
      .update(sectionRevisions)
      .set({ status: "completed", versionId: made.version.id, writtenWords: revised.writtenWords, finishedAt: new Date() })
      .where(and(eq(sectionRevisions.articleId, article.id), eq(sectionRevisions.number, number)))
      .returning();
    // The article's cost stays the total of its cost breakdown, which lists the revision's call.
    const costed = revised.cost === undefined ? made.article : await updateArticle(tx, article.id, { cost: revised.cost });
    return { ...made, article: costed, revision: completed! };
  });
}

/** The revision ends without a version (a completed one stays completed). */
export async function failRevision(db: Db, externalId: string, number: number, reason: string): Promise<RevisionRecord> {
  return onArticle(db, externalId, async (tx, article) => {
    const revision = await lockedRevision(tx, article, number);
    if (revision.status === "completed" || revision.status === "failed") return revision;
    const [failed] = await tx
      .update(sectionRevisions)
      .set({ status: "failed", failureReason: reason.slice(0, 2000), finishedAt: new Date() })
      .where(and(eq(sectionRevisions.articleId, article.id), eq(sectionRevisions.number, number)))
      .returning();
    return failed!;
  });
}

/** The number of the article's revision queued or running, if any (a second waits for it, and so does an erasure). */
export async function revisionUnderWay(tx: Db, articleId: number): Promise<number | undefined> {
  const [running] = await tx.select({ number: sectionRevisions.number }).from(sectionRevisions).where(and(eq(sectionRevisions.articleId, articleId), inArray(sectionRevisions.status, UNDER_WAY)));
  return running?.number;
}

export const REVISION_CANCELLED = "Cancelled by the client.";

/** A client's cancel of a finished article stops its revision under way (the runner, told, aborts its call); undefined when none is. */
export async function cancelRevision(db: Db, externalId: string): Promise<RevisionRecord | undefined> {
  return onArticle(db, externalId, async (tx, article) => {
    const number = await revisionUnderWay(tx, article.id);
    if (number === undefined) return undefined;
    const [cancelled] = await tx
      .update(sectionRevisions)
      .set({ status: "failed", failureReason: REVISION_CANCELLED, finishedAt: new Date() })
      .where(and(eq(sectionRevisions.articleId, article.id), eq(sectionRevisions.number, number)))
      .returning();
    return cancelled;
  });
}
