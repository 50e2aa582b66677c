// The OpenAPI shapes of an article after generation: a version, an edit's body, a section
// revision, the version_created event. Kept apart from schemas.ts so the additions stay in one place.
import { Type, type Static } from "@sinclair/typebox";
import type { PresentedVersion } from "../articles/article-versions.ts";
import { nullable } from "./fields.ts";
import { QualityReport, Source } from "./schemas.ts";
import { REVISION_ACTIONS, type presentRevision } from "../articles/section-revisions.ts";

const Nullable = <T extends ReturnType<typeof Type.Unsafe>>(schema: T) => nullable(schema) as unknown as ReturnType<typeof Type.Union<[T, ReturnType<typeof Type.Null>]>>;

export const VERSION_KINDS = ["generated", "humanized", "edited", "restored", "section_rewrite"] as const;

export const ArticleVersion = Type.Object(
  {
    id: Type.Integer({ minimum: 1, description: "The version's id: what current_version_id and published_version_id name, and the ETag of the article while it is current." }),
    number: Type.Integer({ minimum: 1, description: "Its number within the article, from 1 (the generation output); the {version} of the version paths." }),
    kind: Type.String({ enum: [...VERSION_KINDS], description: "generated (version 1, original_content), humanized (the humanization pass), edited (PATCH), restored (a restore), section_rewrite (a section revision)." }),
    current: Type.Boolean({ description: "Whether content shows it (current_version_id)." }),
    published: Type.Boolean({ description: "Whether it is the version last delivered (published_version_id)." }),
    created_at: Type.String({ format: "date-time" }),
    word_count: Type.Integer({ minimum: 0 }),
    made_by: Type.Object(
      { key_id: Type.Optional(Type.Integer({ description: "The API key of an edit or restore." })), workload: Type.Optional(Nullable(Type.String({ description: "The workload that made it, e.g. generation-runner." }))) },
      { description: "Who made it: an API key, or a workload." },
    ),
    restored_from: Nullable(Type.Integer({ description: "A restore's source version (its number)." })),
    ai_detection_score: Nullable(Type.Number({ description: "Its originality score, once checked (an edited text: null until checked)." })),
    content: Type.Optional(Type.String({ description: "Its content: only in GET /v1/articles/{id}/versions/{version}." })),
    description: Nullable(Type.String()),
    sources: Type.Array(Source, { description: "The sources as it cites them." }),
    citations_removed: Type.Integer({ minimum: 0, description: "Citations of a number that is not a source: removed at generation; counted, not removed, in an edit's text." }),
    quality: Nullable(QualityReport),
    revision: Nullable(
      Type.Object(
        {
          number: Type.Integer({ minimum: 1, description: "The revision's number within the article." }),
          action: Type.String({ enum: [...REVISION_ACTIONS] }),
          section_index: Type.Integer({ minimum: 1, description: "The section's index among the H2 sections (from 1)." }),
          section_heading: Type.String({ description: "The section's heading before the revision." }),
          instruction: Nullable(Type.String({ description: "A rewrite's instruction." })),
          language: Nullable(Type.String({ description: "A translation's language." })),
        },
        { description: "What a section revision changed (kind section_rewrite); null for other kinds." },
      ),
    ),
  },
  { description: "One immutable version of an article." },
);

export const ArticleRevision = Type.Object(
  {
    number: Type.Integer({ minimum: 1, description: "Its number within the article, from 1." }),
    status: Type.String({ enum: ["queued", "running", "completed", "failed"], description: "queued, running, completed (version_id names the version it made) or failed (failure_reason says why; its held words were given back)." }),
    action: Type.String({ enum: [...REVISION_ACTIONS] }),
    section: Type.Object({ index: Type.Integer({ minimum: 1 }), heading: Type.String() }, { description: "The section as it was when asked for." }),
    instruction: Nullable(Type.String()),
    target_words: Nullable(Type.Integer({ description: "The words asked for; null: the section's length." })),
    language: Nullable(Type.String()),
    reserved_words: Type.Integer({ minimum: 1, description: "Words held against the monthly allowance: 120% of target_words (else of the section's length)." }),
    written_words: Nullable(Type.Integer({ description: "Words of the section it wrote: what was settled." })),
    version_id: Nullable(Type.Integer({ description: "The version it made, once completed." })),
    failure_reason: Nullable(Type.String()),
    created_at: Type.String({ format: "date-time" }),
    finished_at: Nullable(Type.String({ format: "date-time" })),
  },
  { description: "One section revision of an article." },
);

export const ArticleSection = Type.Object(
  {
    index: Type.Integer({ minimum: 1, description: "Its place among the body's H2 sections, from 1: what `section` may name." }),
    heading: Type.String({ description: "Its heading text: what `section` may name instead." }),
    word_count: Type.Integer({ minimum: 0, description: "Words of its text." }),
  },
  { description: "One H2 section of the current content." },
);

export const VersionConflict = Type.Object(
  {
    message: Type.String({ description: "Why: the base version no longer current (naming the current one), or the article's status." }),
    current_version_id: Nullable(Type.Integer({ description: "The version current now: fetch it and redo the change on it." })),
    status: Nullable(Type.String({ description: "The article's status." })),
  },
  { description: "A change refused: nothing changed (409)." },
);

type Loose = "created_at" | "sources" | "quality" | "made_by" | "revision";
type Fits<A extends B, B> = A;
export type VersionSchemaChecks = [
  Fits<Omit<PresentedVersion, Loose>, Omit<Static<typeof ArticleVersion>, Loose>>,
  Fits<Omit<ReturnType<typeof presentRevision>, "action" | "status">, Omit<Static<typeof ArticleRevision>, "action" | "status">>,
];
