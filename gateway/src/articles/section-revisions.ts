// POST /v1/articles/{id}/revisions (and articles.api.v1 ReviseArticleSection): one H2 section of a
// completed or published article rewritten, expanded, shortened, regenerated, translated or
// humanized by the generation-runner, ending in a new version where only that section changed.
// The section is named by its index (from 1) or heading as GET /v1/articles/{id}/revisions lists
// them. 120% of the section's words (target_words, else its current length) is held under the
// revision's own reference first, as creation holds an article's, and the run settles what it
// wrote; should article-store then refuse (409, or a replayed Idempotency-Key), the hold goes back.
// Needs update access; reading the sections and revisions needs view access.
import { randomUUID } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { SectionRevision } from "../../../proto/gen/articles/article_store/v1/revisions_pb.ts";
import { bodyOf } from "../../../services/kit/src/article-envelope.ts";
import { articleSections, findSection, sectionWords } from "../../../services/kit/src/rules/article-sections.ts";
import { HttpError, validationError } from "../errors.ts";
import type { FieldTable } from "../openapi/fields.ts";
import type { Caller, V1Gate } from "../plugins/caller.ts";
import { Validator } from "../validation.ts";
import type { ArticleWithProject } from "./article-with-project.ts";
import { LANGUAGES } from "./creation-request.ts";
import { KEY_REUSED_MESSAGE, requestHashOf } from "./idempotency.ts";

export const REVISION_ACTIONS = ["rewrite", "expand", "shorten", "regenerate", "translate", "humanize"] as const;

export const REVISION_FIELDS = {
  section: { type: "string", required: true, max: 255, description: "The H2 section: its index from 1 (a number or digits) or its heading text, as GET /v1/articles/{id}/revisions lists them.", example: "2" },
  action: { type: "string", required: true, enum: REVISION_ACTIONS, description: "rewrite (needs instruction), expand, shorten, regenerate, translate (needs language) or humanize.", example: "rewrite" },
  instruction: { type: "string", max: 2000, description: "What to change; required for rewrite.", example: "Open with a concrete example." },
  target_words: { type: "integer", min: 50, max: 5000, description: "Words the section should have; default its current length. 120% of it is held against the monthly allowance.", example: 300 },
  language: { type: "string", enum: LANGUAGES, description: "The language a translate action writes in.", example: "de" },
} as const satisfies FieldTable;

export interface RevisionInput {
  section: string;
  action: (typeof REVISION_ACTIONS)[number];
  instruction?: string;
  targetWords?: number;
  language?: string;
}

/** The body's fields: 422 in the spec's shape for every problem at once. */
export function revisionInput(body: unknown): RevisionInput {
  const v = new Validator(body);
  const raw = v.input.section;
  // An index may come as a number.
  const section = typeof raw === "number" && Number.isInteger(raw) && raw > 0 ? String(raw) : v.string("section", REVISION_FIELDS.section);
  const action = v.oneOf("action", REVISION_ACTIONS, REVISION_FIELDS.action);
  const instruction = v.string("instruction", REVISION_FIELDS.instruction) ?? undefined;
  const targetWords = v.integer("target_words", REVISION_FIELDS.target_words) ?? undefined;
  const language = v.oneOf("language", LANGUAGES, REVISION_FIELDS.language) ?? undefined;
  if (action === "rewrite" && (instruction === undefined || instruction.trim() === "")) v.fail("instruction", "The instruction field is required when action is rewrite.");
  if (action === "translate" && language === undefined && !v.errors.language) v.fail("language", "The language field is required when action is translate.");
  v.check();
  return { section: section!, action: action!, instruction, targetWords, language };
}

/** The 120% held for a section's words (as creation holds 120% of target_word_count). */
export const reservedWordsForSection = (words: number) => Math.max(1, Math.ceil(words * 1.2));

const iso = (t: SectionRevision["createdAt"]) => (t ? timestampDate(t).toISOString() : null);

/** A revision as /v1 presents it. */
export function presentRevision(r: SectionRevision) {
  return {
    number: r.number,
    status: r.status,
    action: r.action,
    section: { index: r.sectionIndex, heading: r.sectionHeading },
    instruction: r.instruction ?? null,
    target_words: r.targetWords ?? null,
    language: r.language ?? null,
    reserved_words: r.reservedWords,
    written_words: r.writtenWords ?? null,
    version_id: r.versionId === undefined ? null : Number(r.versionId),
    failure_reason: r.failureReason ?? null,
    created_at: iso(r.createdAt) ?? new Date(0).toISOString(),
    finished_at: iso(r.finishedAt),
  };
}

/** The current content's H2 sections, as a revision names them. */
export function presentSections(content: string | undefined) {
  const body = bodyOf(content ?? "");
  return articleSections(body).map((s) => ({ index: s.index, heading: s.heading, word_count: sectionWords(body, s) }));
}

export interface QueuedRevision {
  revision: SectionRevision;
  replayed: boolean;
}

const notRevisable = (status: string) => new HttpError(409, { message: `The article is ${status}; only a completed or published article's sections can be revised.`, current_version_id: null, status });

export class SectionRevisions {
  constructor(
    private readonly gate: V1Gate,
    private readonly find: (caller: Caller, identifier: string, access: "view" | "update") => Promise<ArticleWithProject>,
  ) {}

  async revise(caller: Caller, identifier: string, body: unknown, idempotencyKey: string | undefined): Promise<QueuedRevision> {
    const { article, project } = await this.find(caller, identifier, "update");
    const input = revisionInput(body);
    const { clients } = this.gate;
    const idempotent = idempotencyKey === undefined ? undefined : { key: idempotencyKey, hash: requestHashOf(body) };
    if (!idempotent && article.status !== "completed" && article.status !== "published") throw notRevisable(article.status);
    const text = bodyOf(article.content ?? "");
    const section = findSection(articleSections(text), input.section);
    // A replay is answered below whatever the content is now; a new request needs the section.
    if (!section && !idempotent) throw validationError({ section: [`The article has no H2 section "${input.section}"; GET /v1/articles/{id}/revisions lists its sections.`] });
    const words = input.targetWords ?? Math.max(section ? sectionWords(text, section) : 0, 1);
    const reference = randomUUID();
    const reservedWords = reservedWordsForSection(words);
    try {
      await clients.quota.reserveWords({ accountId: BigInt(caller.accountId), reference, words: BigInt(reservedWords), projectId: project.id, keyId: caller.keyId ? BigInt(caller.keyId) : undefined });
    } catch (error) {
      if (error instanceof ConnectError && error.code === Code.FailedPrecondition) throw validationError({ target_words: [error.rawMessage] });
      throw error;
    }
    try {
      const made = await clients.revisions.createRevision({
        externalId: article.externalId,
        reference,
        action: input.action,
        sectionIndex: section?.index ?? 0,
        sectionHeading: section?.heading ?? "",
        instruction: input.instruction,
        targetWords: input.targetWords,
        language: input.language,
        reservedWords,
        keyId: BigInt(caller.keyId ?? 0),
        idempotencyKey: idempotent?.key,
        requestHash: idempotent?.hash,
      });
      if (made.replayed) await clients.quota.releaseWords({ reference }).catch(() => {});
      return { revision: made.revision!, replayed: made.replayed };
    } catch (error) {
      await clients.quota.releaseWords({ reference }).catch(() => {});
      if (error instanceof ConnectError && error.code === Code.Aborted) throw new HttpError(409, { message: error.rawMessage, current_version_id: null, status: article.status });
      if (error instanceof ConnectError && error.code === Code.InvalidArgument && error.rawMessage === KEY_REUSED_MESSAGE) throw validationError({ idempotency_key: [KEY_REUSED_MESSAGE] }, KEY_REUSED_MESSAGE);
      throw error;
    }
  }

  async list(caller: Caller, identifier: string) {
    const { article } = await this.find(caller, identifier, "view");
    const { revisions } = await this.gate.clients.revisions.listRevisions({ externalId: article.externalId });
    return { sections: presentSections(article.content), revisions };
  }
}
