// The OpenAPI shapes of an article after generation: a version, an edit's body, the
// version_created event. Kept apart from schemas.ts so the additions stay in one place.
import { Type, type Static } from "@sinclair/typebox";
import type { PresentedVersion } from "../articles/article-versions.ts";
import { nullable } from "./fields.ts";
import { QualityReport, Source } from "./schemas.ts";

const Nullable = <T extends ReturnType<typeof Type.Unsafe>>(schema: T) => nullable(schema) as unknown as ReturnType<typeof Type.Union<[T, ReturnType<typeof Type.Null>]>>;

export const VERSION_KINDS = ["generated", "humanized", "edited", "restored"] as const;

export const ArticleVersion = Type.Object(
  {
    id: Type.Integer({ minimum: 1, description: "The version's id: what current_version_id and published_version_id name, and the ETag of the article while it is current." }),
    number: Type.Integer({ minimum: 1, description: "Its number within the article, from 1 (the generation output); the {version} of the version paths." }),
    kind: Type.String({ enum: [...VERSION_KINDS], description: "generated (version 1, original_content), humanized (the humanization pass), edited (PATCH), restored (a restore)." }),
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
  },
  { description: "One immutable version of an article." },
);

export const VersionConflict = Type.Object(
  {
    message: Type.String({ description: "Why: the base version no longer current (naming the current one), or the article's status." }),
    current_version_id: Nullable(Type.Integer({ description: "The version current now: fetch it and redo the change on it." })),
    status: Nullable(Type.String({ description: "The article's status." })),
  },
  { description: "A change refused: nothing changed (409)." },
);

type Loose = "created_at" | "sources" | "quality" | "made_by";
type Fits<A extends B, B> = A;
export type VersionSchemaChecks = [Fits<Omit<PresentedVersion, Loose>, Omit<Static<typeof ArticleVersion>, Loose>>];
