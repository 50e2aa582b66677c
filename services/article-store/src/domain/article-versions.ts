// An article's life after generation: its version history, a client's edit and a restore of an
// earlier version. Every change adds a version (never rewrites one) and makes it current, on the
// locked article row, only when the change names the version it was based on and that version is
// still current: of two edits on the same base exactly one wins, and the other changes nothing.
// Status, current_step, the publication marks and original_content never change here.
import { and, asc, eq, getTableColumns, max } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { articleVersions, type ArticleSource } from "../db/schema.ts";
import { notFound, precondition, stale, throwIfAny, type FieldErrors } from "../../../kit/src/errors.ts";
import { countWords } from "../../../kit/src/words.ts";
import { bodyOf, envelopeOf } from "../../../kit/src/article-envelope.ts";
import { getArticleByExternalId, updateArticle, type ArticleRecord } from "./articles.ts";
import { isDone, onArticle, type VersionRecord } from "./lifecycle.ts";

/** A version as a history lists it: everything but its content. */
export type VersionSummary = Omit<VersionRecord, "content">;

/** Who made a change asked for without an API key: a granted workload acting for a user. */
const ACTING_WORKLOAD = "acting-workload";

/** Who asks for a change: the API key behind the client's request (0: none, a workload acting for a user). */
export interface VersionAuthor {
  keyId: number;
}

// As a stored article body may hold (1 MiB of text, the generation's own bound is far below).
const MAX_CONTENT_CHARS = 1_048_576;
const MAX_DESCRIPTION_CHARS = 1_000;

/** The history of the article, oldest first (without contents). */
export async function listVersions(db: Db, externalId: string): Promise<{ article: ArticleRecord; versions: VersionSummary[] }> {
  const article = await getArticleByExternalId(db, externalId);
  const { content: _content, ...summary } = getTableColumns(articleVersions);
  const versions = await db.select(summary).from(articleVersions).where(eq(articleVersions.articleId, article.id)).orderBy(asc(articleVersions.number));
  return { article, versions };
}

/** One version of the article by its number (1 is the generation output). */
export async function getVersion(db: Db, externalId: string, number: number): Promise<{ article: ArticleRecord; version: VersionRecord }> {
  const article = await getArticleByExternalId(db, externalId);
  return { article, version: await versionNumbered(db, article, number) };
}

async function versionNumbered(db: Db, article: ArticleRecord, number: number): Promise<VersionRecord> {
  const [version] = Number.isSafeInteger(number) && number > 0
    ? await db.select().from(articleVersions).where(and(eq(articleVersions.articleId, article.id), eq(articleVersions.number, number)))
    : [];
  if (!version) throw notFound("No such version of this article.");
  return version;
}

/**
 * Refuses a change of an article that is not finished, or based on a version that is no longer
 * current. `baseVersionId` undefined means the caller named no base (a restore may omit it).
 */
function requireCurrentBase(article: ArticleRecord, baseVersionId: number | undefined): void {
  if (!isDone(article.status) || article.currentVersionId === null) {
    throw stale(`The article is ${article.status}; only a completed or published article has versions to change.`);
  }
  if (baseVersionId !== undefined && baseVersionId !== article.currentVersionId) {
    throw stale(`The article changed: version ${baseVersionId} is no longer current; its current version is ${article.currentVersionId}.`);
  }
}

export type VersionBody = Pick<VersionRecord, "kind" | "content" | "wordCount" | "description" | "sources" | "citationsRemoved" | "quality" | "aiDetectionScore" | "originalityCheckedAt" | "restoredFrom"> & Partial<Pick<VersionRecord, "revision">>;

/** Adds the next version of the locked article and makes it what the article shows. */
export async function appendVersion(tx: Db, article: ArticleRecord, body: VersionBody, author: VersionAuthor): Promise<{ article: ArticleRecord; version: VersionRecord }> {
  const [{ last }] = await tx.select({ last: max(articleVersions.number) }).from(articleVersions).where(eq(articleVersions.articleId, article.id));
  const [version] = await tx
    .insert(articleVersions)
    // A team's workload acting for a user (the public gRPC API) calls without a key.
    .values({ ...body, articleId: article.id, number: (last ?? 0) + 1, madeByKeyId: author.keyId > 0 ? author.keyId : null, madeByWorkload: author.keyId > 0 ? null : ACTING_WORKLOAD })
    .returning();
  const updated = await updateArticle(tx, article.id, {
    content: version.content,
    description: version.description,
    currentVersionId: version.id,
    actualWordCount: version.wordCount,
    aiDetectionScore: version.aiDetectionScore,
    // When the current version's check ran (spec 2.2): none yet for an edit until it is checked,
    // which also puts the article in the reconciler's walk should the check be lost.
    originalityCheckedAt: version.originalityCheckedAt,
    sources: version.sources,
    citationsRemoved: version.citationsRemoved,
    quality: version.quality,
  });
  return { article: updated, version };
}

/**
 * Makes version `number` current again, as a new version with its content, description, sources,
 * checks and score (the same text scores the same).
 */
export async function restoreVersion(db: Db, externalId: string, number: number, baseVersionId: number | undefined, author: VersionAuthor) {
  return onArticle(db, externalId, async (tx, article) => {
    const earlier = await versionNumbered(tx, article, number);
    requireCurrentBase(article, baseVersionId);
    const { content, wordCount, description, sources, citationsRemoved, quality, aiDetectionScore, originalityCheckedAt } = earlier;
    return appendVersion(tx, article, { kind: "restored", content, wordCount, description, sources, citationsRemoved, quality, aiDetectionScore, originalityCheckedAt, restoredFrom: earlier.number }, author);
  });
}

export interface ArticleEdit {
  /** The version the edit was made on: it must still be current. */
  baseVersionId: number;
  /** The new article body (markdown); for an article stored as a JSON envelope, its article.content. */
  content?: string;
  description?: string | null;
}

function checkEdit(edit: ArticleEdit): void {
  const errors: FieldErrors = {};
  if (!Number.isSafeInteger(edit.baseVersionId) || edit.baseVersionId <= 0) errors.base_version_id = ["base_version_id must be the id of the article's current version."];
  if (edit.content === undefined && edit.description === undefined) errors.content = ["Send content, description or both."];
  if (edit.content !== undefined) {
    if (edit.content.trim() === "") errors.content = ["The content field must not be empty."];
    else if (edit.content.length > MAX_CONTENT_CHARS) errors.content = [`The content field must not be longer than ${MAX_CONTENT_CHARS} characters.`];
  }
  if (typeof edit.description === "string" && edit.description.length > MAX_DESCRIPTION_CHARS) errors.description = [`The description field must not be longer than ${MAX_DESCRIPTION_CHARS} characters.`];
  throwIfAny(errors);
}

// An image's markdown: its alt text is not part of the text a reader reads (generation counts before placing images).
const IMAGE = /!\[[^\]]*\]\([^)]*\)/g;
export const readersWords = (body: string) => countWords(body.replace(IMAGE, " "));

/** Stored content with its body replaced: inside a JSON envelope's article.content when the article has one. */
export function withBody(stored: string, body: string): string {
  const envelope = envelopeOf(stored);
  return envelope ? JSON.stringify({ ...envelope.document, article: { ...envelope.article, content: body } }) : body;
}

// A citation marker as the text shows it: [3], or a link's \[3\] (inline style), outside code.
const MARKER = /\\?\[(\d{1,4})\\?\]/g;
const FENCED = /^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm;

/**
 * The sources as an edited body cites them, and its markers of numbers that are not a source
 * (counted as generation counts the ones it removes; an edit's text is kept as written).
 */
export function citationsIn(body: string, sources: readonly ArticleSource[]): { sources: ArticleSource[]; unresolved: number } {
  const known = new Set(sources.map((s) => s.number));
  const cited = new Set<number>();
  let unresolved = 0;
  for (const match of body.replace(FENCED, "").matchAll(MARKER)) {
    const n = Number(match[1]);
    if (known.has(n)) cited.add(n);
    else unresolved++;
  }
  return { sources: sources.map((s) => ({ ...s, cited: cited.has(s.number) })), unresolved };
}

/**
 * A client's edit of a finished article: a new version with the body and description given (the
 * rest as the base had them), its words counted and citations read again, not yet checked for
 * originality (ai_detection_score null until it is). 409 when `baseVersionId` is not current.
 */
export async function editArticle(db: Db, externalId: string, edit: ArticleEdit, author: VersionAuthor) {
  checkEdit(edit);
  return onArticle(db, externalId, async (tx, article) => {
    requireCurrentBase(article, edit.baseVersionId);
    const [base] = await tx.select().from(articleVersions).where(eq(articleVersions.id, article.currentVersionId!));
    if (!base) throw precondition("The article's current version is missing.");
    const content = edit.content === undefined ? base.content : withBody(base.content, edit.content);
    const body = bodyOf(content);
    const citations = (article.settings.citations ?? "none") === "none" || base.sources.length === 0 ? { sources: base.sources, unresolved: base.citationsRemoved } : citationsIn(body, base.sources);
    const description = edit.description === undefined ? base.description : edit.description;
    const sameText = content === base.content;
    return appendVersion(
      tx,
      article,
      {
        kind: "edited",
        content,
        wordCount: readersWords(body),
        description,
        sources: citations.sources,
        citationsRemoved: citations.unresolved,
        // The brief checks measured the base's text; an edit of the description alone keeps them.
        quality: sameText ? base.quality : null,
        aiDetectionScore: sameText ? base.aiDetectionScore : null,
        originalityCheckedAt: sameText ? base.originalityCheckedAt : null,
        restoredFrom: null,
      },
      author,
    );
  });
}
