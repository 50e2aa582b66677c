// An article's life after generation, once for /v1 (routes/articles.ts) and articles.api.v1 (gRPC):
// its version history, restoring an earlier version, and a client's edit (PATCH). Reads need view
// access to the article's project, changes update access (a read-only key is refused with 403).
// A change names the version it was made on (If-Match with the article's ETag, or base_version_id);
// when another change came first it answers 409 naming the current version, and nothing changed.
import { Code, ConnectError } from "@connectrpc/connect";
import type { Article } from "../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import type { ArticleVersion } from "../../../proto/gen/articles/article_store/v1/versions_pb.ts";
import { parseJsonDocument } from "../../../services/kit/src/article-envelope.ts";
import { iso, presentSource } from "../../../services/kit/src/public-article.ts";
import type { QualityReport } from "../../../services/kit/src/rules/quality-report.ts";
import { HttpError, notFoundError, validationError } from "../errors.ts";
import type { Caller, V1Gate } from "../plugins/caller.ts";
import type { Logger } from "../../../services/kit/src/logger.ts";
import type { FieldTable } from "../openapi/fields.ts";
import { Validator } from "../validation.ts";
import type { ArticleWithProject } from "./article-with-project.ts";

/** The article's ETag: its current version, quoted (a strong validator: one version, one body). */
export const articleEtag = (article: Pick<Article, "currentVersionId">) => (article.currentVersionId === undefined ? undefined : `"${article.currentVersionId}"`);

const ETAG = /^(?:W\/)?"(\d{1,16})"$/;

/** The version id an If-Match header names, undefined without one; 422 for anything but one ETag of ours. */
export function ifMatchVersion(header: string | null | undefined): number | undefined {
  if (header === null || header === undefined || header.trim() === "") return undefined;
  const match = ETAG.exec(header.trim());
  if (!match) throw validationError({ "If-Match": ['If-Match must be the article\'s ETag as GET answered it, e.g. "42".'] });
  return Number(match[1]);
}

export const EDIT_FIELDS = {
  content: { type: "string", description: "The new body, markdown (for an article stored as a JSON envelope, its article.content). Its H1 is the editable headline (3 to 255 characters).", example: "# Pour-over at home\n\nBloom the grounds first…" },
  description: { type: "string", nullable: true, max: 1000, description: "The new meta description; null clears it.", example: "Brew a clean, bright cup." },
  base_version_id: { type: "integer", min: 1, description: "The current_version_id the edit was made on; or send If-Match with the ETag GET answered.", example: 42 },
} as const satisfies FieldTable;

// Characters of an edited body: far above any generated article (the request body's own limit is lower still).
const MAX_CONTENT = 1_000_000;
const H1 = /^#[ \t]+(.+?)[ \t#]*$/m;

export interface ArticleEditInput {
  content?: string;
  description?: string | null;
  baseVersionId: number;
}

/** An edit's fields from the body and If-Match: 422 in the spec's shape for every problem at once. */
export function editInput(body: unknown, ifMatch: number | undefined): ArticleEditInput {
  const v = new Validator(body);
  const content = v.string("content", { max: MAX_CONTENT }) ?? undefined;
  const description = v.string("description", { nullable: true, max: EDIT_FIELDS.description.max });
  const base = v.integer("base_version_id", { min: 1, max: Number.MAX_SAFE_INTEGER }) ?? undefined;
  if (v.has("title")) v.fail("title", "The title stays as submitted; edit the H1 inside content to change the headline.");
  if (content !== undefined) {
    if (content.trim() === "") v.fail("content", "The content field must not be empty.");
    else if (parseJsonDocument(content) !== undefined) v.fail("content", "The content field must be markdown, not a JSON document.");
    const headline = H1.exec(content)?.[1]?.trim();
    if (headline !== undefined && (headline.length < 3 || headline.length > 255)) v.fail("content", "The headline (the H1 in content) must be between 3 and 255 characters.");
  }
  if (content === undefined && description === undefined && v.valid) v.fail("content", "Send content, description or both.");
  if (base !== undefined && ifMatch !== undefined && base !== ifMatch) v.fail("base_version_id", "base_version_id and If-Match name different versions.");
  const baseVersionId = ifMatch ?? base;
  if (baseVersionId === undefined) v.fail("base_version_id", "Send If-Match with the article's ETag, or base_version_id: the version the edit was made on.");
  v.check();
  return { content, description: description ?? undefined, ...(description === null ? { description: null } : {}), baseVersionId: baseVersionId! };
}

/** A version as /v1 presents it; `content` only for one version read on its own. */
export function presentVersion(v: ArticleVersion, article: Pick<Article, "currentVersionId" | "publishedVersionId">) {
  return {
    id: Number(v.id),
    number: v.number,
    kind: v.kind,
    // The version content shows, and the one last delivered (webhook or publication).
    current: v.id === article.currentVersionId,
    published: v.id === article.publishedVersionId,
    created_at: iso(v.createdAt),
    word_count: v.wordCount,
    made_by: v.madeByKeyId !== undefined ? { key_id: Number(v.madeByKeyId) } : { workload: v.madeByWorkload ?? null },
    restored_from: v.restoredFrom ?? null,
    ai_detection_score: v.aiDetectionScore ?? null,
    ...(v.content !== undefined ? { content: v.content } : {}),
    description: v.description ?? null,
    sources: v.sources.map(presentSource),
    citations_removed: v.citationsRemoved,
    quality: (v.quality as QualityReport | undefined) ?? null,
    // A section revision's section, action and instruction; null for other kinds.
    revision: v.revision
      ? { number: v.revision.number, action: v.revision.action, section_index: v.revision.sectionIndex, section_heading: v.revision.sectionHeading, instruction: v.revision.instruction ?? null, language: v.revision.language ?? null }
      : null,
  };
}

export type PresentedVersion = ReturnType<typeof presentVersion>;

export interface ChangedArticle extends ArticleWithProject {
  version: ArticleVersion;
}

const VERSION_NOT_FOUND = "Version not found.";

/** A version number from a path or message: a positive integer, else 404 as an unknown one. */
function versionNumber(value: string | number): number {
  const n = typeof value === "number" ? value : /^[1-9]\d{0,8}$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || n < 1 || n > 2_147_483_647) throw notFoundError(VERSION_NOT_FOUND);
  return n;
}

/** The version operations, given how the article operations find an article the caller may reach. */
export class ArticleVersions {
  constructor(
    private readonly gate: V1Gate,
    private readonly find: (caller: Caller, identifier: string, access: "view" | "update") => Promise<ArticleWithProject>,
    private readonly logger: Logger,
  ) {}

  /**
   * Has the runner's detector score a new, unchecked version: the edit answers at once with
   * ai_detection_score null, and the article shows the score once recorded. A check lost to a
   * failure is logged; the version then stays unchecked.
   */
  private checkOriginality(externalId: string, version: ArticleVersion): void {
    if (version.aiDetectionScore !== undefined) return;
    void this.gate.clients.originality
      .checkVersion({ externalId, number: version.number })
      .catch((error) => this.logger.warn("could not check an edited version's originality", { externalId, version: version.number, error: (error as Error).message }));
  }

  async list(caller: Caller, identifier: string): Promise<ArticleWithProject & { versions: ArticleVersion[] }> {
    const { article, project } = await this.find(caller, identifier, "view");
    const reply = await this.gate.clients.versions.listVersions({ externalId: article.externalId });
    return { article: reply.article ?? article, project, versions: reply.versions };
  }

  async get(caller: Caller, identifier: string, number: string | number): Promise<ArticleWithProject & { version: ArticleVersion }> {
    const { article, project } = await this.find(caller, identifier, "view");
    const reply = await this.stale(article.externalId, () => this.gate.clients.versions.getVersion({ externalId: article.externalId, number: versionNumber(number) }), VERSION_NOT_FOUND);
    return { article: reply.article ?? article, project, version: reply.version! };
  }

  async restore(caller: Caller, identifier: string, number: string | number, baseVersionId: number | undefined): Promise<ChangedArticle> {
    const { article, project } = await this.find(caller, identifier, "update");
    const n = versionNumber(number);
    const reply = await this.stale(article.externalId, () => this.gate.clients.versions.restoreVersion({ externalId: article.externalId, number: n, baseVersionId: baseVersionId === undefined ? undefined : BigInt(baseVersionId), keyId: BigInt(caller.keyId) }), VERSION_NOT_FOUND);
    return { article: reply.article!, project, version: reply.version! };
  }

  async edit(caller: Caller, identifier: string, body: unknown, ifMatch: number | undefined): Promise<ChangedArticle> {
    const { article, project } = await this.find(caller, identifier, "update");
    const edit = editInput(body, ifMatch);
    const reply = await this.stale(article.externalId, () =>
      this.gate.clients.versions.editArticle({
        externalId: article.externalId,
        baseVersionId: BigInt(edit.baseVersionId),
        content: edit.content,
        description: edit.description ?? undefined,
        clearDescription: edit.description === null,
        keyId: BigInt(caller.keyId),
      }),
    );
    this.checkOriginality(article.externalId, reply.version!);
    return { article: reply.article!, project, version: reply.version! };
  }

  /**
   * The call, its refusals as /v1 answers them: a change on a stale base (or of an unfinished
   * article) is 409 with the version now current; an unknown version is 404.
   */
  private async stale<T>(externalId: string, call: () => Promise<T>, notFoundMessage?: string): Promise<T> {
    try {
      return await call();
    } catch (error) {
      if (!(error instanceof ConnectError)) throw error;
      if (error.code === Code.NotFound && notFoundMessage) throw notFoundError(notFoundMessage);
      if (error.code !== Code.Aborted) throw error;
      const { article } = await this.gate.clients.articles.getArticle({ identifier: externalId });
      throw new HttpError(409, { message: error.rawMessage, current_version_id: article?.currentVersionId === undefined ? null : Number(article.currentVersionId), status: article?.status ?? null });
    }
  }
}
