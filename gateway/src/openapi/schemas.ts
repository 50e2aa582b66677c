// The response shapes of the public API as TypeBox (JSON Schema). The presenters' return types are
// checked against them at compile time (the assertions at the end), and a test validates real
// responses against the document, so the documented shapes follow the code.
import { Type, type Static, type TSchema } from "@sinclair/typebox";
import type { PresentedArticle } from "../../../services/kit/src/public-article.ts";
import { ARTICLE_STATUSES } from "../../../services/kit/src/rules/article-statuses.ts";
import type { presentStep, presentWorkflow } from "../presenters/workflow.ts";
import type { presentUser } from "../presenters/user.ts";
import type { estimateArticle } from "../articles/estimate.ts";
import type { stepBreakdown } from "../articles/step-breakdown.ts";
import { nullable } from "./fields.ts";
import type { PresentedDestination, presentCheck } from "../publishing/publishing-operations.ts";
import { MAX_STEP_ICON_LENGTH, MAX_STEP_NAME_LENGTH, MAX_TIMEOUT_SECONDS, MIN_TIMEOUT_SECONDS, OUTPUT_FORMATS } from "../../../services/kit/src/rules/workflow-steps.ts";

const Nullable = <T extends TSchema>(schema: T) => nullable(schema) as unknown as ReturnType<typeof Type.Union<[T, ReturnType<typeof Type.Null>]>>;
const Timestamp = (description = "ISO 8601, UTC.") => Type.String({ format: "date-time", description, examples: ["2025-01-15T10:30:00.000Z"] });
const Usd = (description: string) => Type.String({ pattern: "^[0-9]+\\.[0-9]{2,}$", description: `${description} USD as a decimal string.`, examples: ["0.0123"] });
const Id = (description: string) => Type.Integer({ minimum: 1, description, examples: [42] });

export const ArticleStatus = Type.Union(ARTICLE_STATUSES.map((s) => Type.Literal(s)), {
  type: "string",
  enum: [...ARTICLE_STATUSES],
  description: "queued → writing → (polishing) → completed → (published); batching for batch generation; failed at any point.",
});

export const ArticleImage = Type.Object(
  {
    url: Type.String({ format: "uri", description: "Public URL (no API key needed)." }),
    alt: Type.String({ description: "Alternative text." }),
    width: Type.Integer({ description: "Pixels." }),
    height: Type.Integer({ description: "Pixels." }),
    aspect_ratio: Type.String({ description: "One of the image aspect ratios.", examples: ["16:9"] }),
    position: Type.Integer({ description: "Order in the content, from 1." }),
  },
  { description: "An image of the article's content." },
);

export const PublicationAttempt = Type.Object(
  {
    attempt: Type.Integer({ minimum: 1, description: "1 for a publish request's first attempt." }),
    attempted_at: Timestamp(),
    outcome: Type.Union([Type.Literal("published"), Type.Literal("retry"), Type.Literal("failed")], { description: "retry: the site failed or was busy, another attempt follows (after its Retry-After when it sent one)." }),
    status_code: Nullable(Type.Integer({ description: "The site's HTTP status, when it answered." })),
    error: Nullable(Type.String({ description: "What went wrong (never a credential)." })),
    duration_ms: Type.Integer(),
    version_id: Type.Integer({ description: "The version it published." }),
  },
  { description: "One attempt of a publishing job." },
);

export const Publication = Type.Object(
  {
    destination_id: Id("The destination (of the article's project)."),
    destination_kind: Type.String({ description: "wordpress or ghost.", examples: ["wordpress"] }),
    state: Type.Union([Type.Literal("queued"), Type.Literal("publishing"), Type.Literal("published"), Type.Literal("failed")], {
      description: "queued → publishing (attempts under way or a retry waiting) → published, or failed (a permanent refusal, e.g. wrong credentials, or every attempt failed).",
    }),
    remote_id: Nullable(Type.String({ description: "The post's id on the site." })),
    remote_url: Nullable(Type.String({ description: "The post's address on the site." })),
    remote_status: Nullable(Type.String({ description: "The post's status there (publish, draft, future; Ghost: published, draft, scheduled)." })),
    version_id: Nullable(Type.Integer({ description: "The version the post holds (or is being made from)." })),
    error: Nullable(Type.String({ description: "Why it failed, or why the last attempt did not succeed." })),
    requested_at: Nullable(Timestamp("When this publication was last asked for.")),
    updated_at: Nullable(Timestamp()),
    attempts: Type.Array(PublicationAttempt, { description: "Oldest first (the last 20)." }),
  },
  { description: "The article's post on one destination (additive)." },
);

export const Source = Type.Object(
  {
    number: Type.Integer({ minimum: 1, description: "The number the text cites it by, as [1]." }),
    url: Type.String({ format: "uri", description: "The page fetched (after redirects; no credentials or fragment, no parameters added)." }),
    title: Type.String({ description: "The page's title, plain text." }),
    site_name: Type.String({ description: "The site's name (its og:site_name, else its host), plain text." }),
    fetched_at: Nullable(Timestamp("When the page was fetched.")),
    cited: Type.Boolean({ description: "True when the article's text cites it." }),
  },
  { description: "A page the article's research read (additive)." },
);

export const QualityCheck = Type.Object(
  {
    name: Type.String({ description: "What is checked: length, keyword_in_title, keyword_in_h1, keyword_in_introduction, keyword_in_h2, keyword_in_meta_description, keyword_density, keywords_present, single_h1, heading_levels, faq_section, meta_title_length, meta_description_length, language, readability, no_placeholder_text, no_filler, complete_ending or citations_resolved.", examples: ["length"] }),
    status: Type.Union([Type.Literal("passed"), Type.Literal("failed"), Type.Literal("not_measured")], { description: "not_measured: the brief asked for nothing this check measures, or the text gives it nothing to measure." }),
    value: Type.Union([Type.Number(), Type.Boolean(), Type.String(), Type.Array(Type.String()), Type.Null()], {
      description: "What was measured: a number (words, characters, a percentage, a score), a yes or no, a language code, or the offending texts (missing keywords, skipped headings, placeholders); null when not measured.",
      examples: [1432],
    }),
    target: Type.String({ description: "What the brief asks for, as a reader would say it.", examples: ["1350–1650 words"] }),
  },
  { description: "One brief check of the article's current version (additive)." },
);

export const QualityReport = Type.Object(
  {
    checks: Type.Array(QualityCheck, { description: "Every check, in a fixed order." }),
    repairs: Type.Array(Type.Object({ check: Type.String(), action: Type.String() }), { description: "Changes made to pass failed checks (none are made yet: empty)." }),
  },
  { description: "Additive: the current version measured against its brief; null until the article completes, and for one completed before the checks existed." },
);

export const Destination = Type.Object(
  {
    id: Id("Destination id."),
    project_id: Id("Its project."),
    kind: Type.Union([Type.Literal("wordpress"), Type.Literal("ghost")]),
    name: Type.String(),
    site_url: Type.String({ description: "The site's address." }),
    username: Nullable(Type.String({ description: "WordPress: the user posts are published as." })),
    default_status: Type.String({ description: "The status of posts unless a publish says otherwise." }),
    default_categories: Type.Array(Type.String()),
    default_tags: Type.Array(Type.String()),
    author_id: Nullable(Type.Integer({ description: "WordPress user id posts are published as; null: the connected user." })),
    created_at: Nullable(Timestamp()),
  },
  { description: "A publishing destination of a project; its credential is write-only and never returned." },
);

export const DestinationCheck = Type.Object(
  {
    ok: Type.Boolean({ description: "The site answered, took the credentials and lets them create posts." }),
    problems: Type.Array(Type.String(), { description: "One sentence each; empty when all is well." }),
    user_name: Nullable(Type.String({ description: "The account the credentials are, as the site names it." })),
    can_create_posts: Type.Boolean(),
    can_publish_posts: Type.Boolean(),
    can_upload_media: Type.Boolean(),
  },
  { description: "A connection check of a destination." },
);

export const Article = Type.Object(
  {
    id: Id("Numeric id."),
    external_id: Type.String({ format: "uuid", description: "Stable public identifier; also the idempotency key of webhook deliveries.", examples: ["0b8f8a4e-5b9c-4a59-9d1e-3c1f2f8a7d10"] }),
    title: Type.String({ description: "As submitted." }),
    description: Nullable(Type.String({ description: "SEO meta description, when the workflow produced one." })),
    content: Nullable(Type.String({ description: "The live article (current version); null until generation completes." })),
    original_content: Nullable(Type.String({ description: "Frozen generation output before edits." })),
    images: Type.Array(ArticleImage, { description: "The content's images; empty until the article completes." }),
    current_version_id: Nullable(Type.Integer({ description: "Version that content is drawn from." })),
    published_version_id: Nullable(Type.Integer({ description: "Version last delivered to an integration." })),
    status: ArticleStatus,
    failure_reason: Nullable(Type.String({ description: "Why a failed article failed (a cancel says so); null otherwise." })),
    article_type: Type.String({ description: "Built-in type or custom workflow slug.", examples: ["blog_post"] }),
    target_keyword: Nullable(Type.String()),
    keywords: Type.Array(Type.String(), { description: "Always an array, even when sent as a comma-separated string." }),
    target_word_count: Type.Integer({ description: "Requested length." }),
    actual_word_count: Type.Integer({ description: "0 until content exists." }),
    tone: Type.String(),
    point_of_view: Type.String(),
    language: Type.String({ description: "Language code." }),
    country_targeting: Nullable(Type.String({ description: "Country code when set." })),
    ai_model_used: Nullable(Type.String({ description: "provider:model; null until the first step completes; may be a fallback." })),
    cost: Usd("Accumulated across every step; \"0.00\" at creation."),
    current_step: Nullable(Type.String({ description: "step_name of the step being executed." })),
    humanize: Type.Boolean(),
    ai_detection_score: Nullable(Type.Integer({ description: "Originality score of the current version, when checked." })),
    originality_checked_at: Nullable(Timestamp("When that check ran.")),
    additional_context: Nullable(Type.String()),
    webhook_url: Nullable(Type.String({ description: "The completion webhook target." })),
    publications: Type.Array(Publication, { description: "Additive: its posts on the project's publishing destinations, one per destination." }),
    sources: Type.Array(Source, { description: "Additive: the pages its research read, numbered as the text cites them; empty without research." }),
    citations: Type.Union([Type.Literal("none"), Type.Literal("inline"), Type.Literal("list")], { description: "Additive: how the text cites its sources, as asked at creation." }),
    citations_removed: Type.Integer({ minimum: 0, description: "Additive: citations of a number that was not among the sources, removed from the text." }),
    quality: Nullable(QualityReport),
    project: Type.Object({ id: Id("Project id."), name: Type.String() }, { description: "Owning project." }),
    created_at: Timestamp(),
    updated_at: Timestamp("Advances as the pipeline progresses."),
  },
  { description: "An article (spec 2.2)." },
);

export const Step = Type.Object(
  {
    id: Id("Step id (update, delete, reorder)."),
    workflow_id: Id("Owning workflow."),
    project_id: Id("Owning project."),
    article_type: Type.String({ description: "Owning workflow's slug." }),
    step_number: Type.Integer({ minimum: 1, description: "Position; steps run in ascending order." }),
    step_name: Type.String({ maxLength: MAX_STEP_NAME_LENGTH }),
    step_description: Nullable(Type.String()),
    step_icon: Nullable(Type.String({ maxLength: MAX_STEP_ICON_LENGTH })),
    system: Type.String({ description: "System prompt (template)." }),
    user: Type.String({ description: "User prompt (template)." }),
    output_format: Type.String({ enum: [...OUTPUT_FORMATS] }),
    timeout_seconds: Type.Integer({ minimum: MIN_TIMEOUT_SECONDS, maximum: MAX_TIMEOUT_SECONDS }),
    include_additional_context: Type.Boolean(),
    include_additional_instruction: Type.Boolean(),
    include_requirements: Type.Boolean(),
    include_research: Type.Boolean(),
    include_outline: Type.Boolean(),
    json_schema: Nullable(Type.Record(Type.String(), Type.Unknown(), { description: "Structured-output schema (output_format json)." })),
    is_custom: Type.Boolean({ description: "Always true here." }),
    is_redacted: Type.Boolean({ description: "Always false here." }),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { description: "A custom workflow step (spec 2.4)." },
);

export const Workflow = Type.Object(
  {
    id: Id("Workflow id (not a step id)."),
    project_id: Id("Owning project."),
    name: Type.String(),
    slug: Type.String({ description: "The article type: pass it as article_type when creating an article." }),
    description: Nullable(Type.String()),
    revision: Type.Integer({ description: "Increments on every change to the workflow or its steps." }),
    is_custom: Type.Boolean({ description: "Always true." }),
    brief_repairs: Type.Boolean({
      description:
        "Whether its articles get length control and brief repairs after the last step, as the built-in workflows' do (a markdown last step only); false: the quality report alone. Set with brief_repairs on a step's create or update body; a new workflow starts false.",
    }),
    steps: Type.Array(Step, { description: "In execution order." }),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { description: "A custom workflow with its steps (spec 2.3)." },
);

export const User = Type.Object(
  {
    id: Id("User id."),
    name: Type.String(),
    email: Type.String({ format: "email" }),
    email_verified_at: Nullable(Timestamp()),
    current_account_id: Nullable(Type.Integer({ description: "The account selected in the dashboard (not necessarily the key's)." })),
    current_project_id: Nullable(Type.Integer()),
    created_at: Nullable(Timestamp()),
    updated_at: Nullable(Timestamp()),
  },
  { description: "The user behind the API key (spec 2.6); no credentials." },
);

export const Estimate = Type.Object(
  {
    project_id: Id("The project."),
    article_type: Type.String(),
    builtin_workflow: Type.Boolean({ description: "Whether article_type is a built-in workflow." }),
    steps: Type.Integer({ description: "Steps the workflow runs." }),
    model: Type.String({ description: "The model creation would use." }),
    fallback_model: Nullable(Type.String({ description: "Its fallback, when one would be used." })),
    words_to_reserve: Type.Integer({ description: "120% of target_word_count." }),
    words_remaining: Type.Integer({ description: "What is left of the month's allowance." }),
    fits_allowance: Type.Boolean(),
    allowance_period: Type.String({ description: "The allowance month.", examples: ["2025-01"] }),
    cost_range: Type.Object({ min: Usd("Lower bound."), max: Usd("Upper bound.") }),
    tokens: Type.Object({
      prompt: Type.Object({ min: Type.Integer(), max: Type.Integer() }),
      completion: Type.Object({ min: Type.Integer(), max: Type.Integer() }),
    }),
  },
  { description: "What creating this article would reserve and cost; nothing is created." },
);

export const StepBreakdown = Type.Object(
  {
    article_id: Id("Article id."),
    external_id: Type.String({ format: "uuid" }),
    status: ArticleStatus,
    article_type: Type.String(),
    steps: Type.Array(
      Type.Object({
        step_number: Type.Integer(),
        step_name: Type.String(),
        model: Type.String(),
        used_fallback: Type.Boolean(),
        batched: Type.Boolean(),
        prompt_tokens: Type.Integer(),
        completion_tokens: Type.Integer(),
        cost: Usd("The step's cost."),
        waited_ms: Type.Integer({
          minimum: 0,
          description: "Milliseconds the step's model call waited for its provider: its turn in the provider's budget, a rate limit's pause, an outage. 0 while unfinished and for a batched step.",
        }),
        attempts: Type.Integer(),
        started_at: Nullable(Timestamp()),
        finished_at: Nullable(Timestamp()),
      }),
    ),
    research: Nullable(Type.Object({ query: Type.String(), sources: Type.Integer(), cost: Usd("Research cost."), finished_at: Nullable(Timestamp()) })),
    images: Type.Array(Type.Object({ position: Type.Integer(), model: Type.String(), size: Type.String(), cost: Usd("The image's cost."), finished_at: Nullable(Timestamp()) })),
    finishing: Type.Array(
      Type.Object({
        task: Type.String({ description: "The finishing pass (humanize, ...)." }),
        model: Type.String(),
        used_fallback: Type.Boolean(),
        prompt_tokens: Type.Integer(),
        completion_tokens: Type.Integer(),
        cost: Usd("The pass's cost."),
        waited_ms: Type.Integer({ minimum: 0, description: "Milliseconds the pass's model call waited for its provider, as for a step." }),
        finished_at: Nullable(Timestamp()),
      }),
    ),
    total_cost: Usd("Sum of all of the above."),
  },
  { description: "What each part of an article's run cost; step names only, never prompts or outputs." },
);

/** The `data` of each Server-Sent Event of GET /v1/articles/{id}/events, by event name. */
export const ArticleEvents = {
  state: Type.Object({ status: ArticleStatus, current_step: Nullable(Type.String()), cost: Usd("Cost so far.") }, { description: "event: state" }),
  step_started: Type.Object({ step: Type.Integer(), name: Type.String(), model: Type.String() }, { description: "event: step_started" }),
  step_finished: Type.Object(
    {
      step: Type.Integer(),
      name: Type.String(),
      model: Type.String(),
      used_fallback: Type.Boolean(),
      prompt_tokens: Type.Integer(),
      completion_tokens: Type.Integer(),
      cost: Usd("The step's cost."),
      cost_so_far: Usd("The article's cost so far."),
      duration_ms: Type.Integer(),
      waited_ms: Type.Integer({ description: "Of duration_ms, the time the step waited for its provider: its turn in the provider's budget, a rate limit's pause, an outage." }),
    },
    { description: "event: step_finished" },
  ),
  waiting: Type.Object(
    {
      step: Type.String({ description: "The step (or finishing pass) held up." }),
      reason: Type.Union([Type.Literal("capacity"), Type.Literal("rate_limited"), Type.Literal("provider_unavailable")], {
        description: "capacity: the provider's budget is spent for now and the call waits its turn; rate_limited: the provider answered 429 and the call goes again after the pause it asked for; provider_unavailable: the provider keeps failing and the article is held, unchanged, until it answers again.",
      }),
      model: Type.String(),
    },
    { description: "event: waiting (a step held up by its provider; sent once per reason and step, the article keeps its state)" },
  ),
  source: Type.Object({ position: Type.Integer(), title: Type.String(), url: Type.String(), word_count: Type.Integer() }, { description: "event: source (a research source kept)" }),
  image: Type.Object({ position: Type.Integer(), url: Type.String(), width: Type.Integer(), height: Type.Integer() }, { description: "event: image" }),
  completed: Type.Object(
    { status: Type.Literal("completed"), cost: Usd("Final cost."), actual_word_count: Type.Integer(), ai_model_used: Nullable(Type.String()), current_version_id: Nullable(Type.Integer()) },
    { description: "event: completed (last event)" },
  ),
  publication: Type.Omit(Publication, [], { description: "event: publication (a publication's new state; after completed, so a client resumes the stream with the completed event's id to follow it)" }),
  published: Type.Object({ status: Type.Literal("published"), cost: Usd("Final cost."), published_version_id: Nullable(Type.Integer()) }, { description: "event: published (last event)" }),
  failed: Type.Object({ status: Type.Literal("failed"), cost: Usd("Final cost."), reason: Nullable(Type.String()), cancelled: Type.Boolean() }, { description: "event: failed (last event)" }),
  // After generation: each version an edit or restore adds.
  version_created: Type.Object(
    {
      version_id: Type.Integer(),
      number: Type.Integer(),
      kind: Type.String({ enum: ["edited", "restored", "section_rewrite"] }),
      word_count: Type.Integer(),
      made_by_key_id: Nullable(Type.Integer()),
      restored_from: Nullable(Type.Integer()),
      current_version_id: Type.Integer(),
      published_version_id: Nullable(Type.Integer()),
    },
    { description: "event: version_created (an edit, a restore or a section revision made a new version current; after the run's final event, so a client resumes the stream with the id of the last event it read; never a webhook delivery)" },
  ),
  retried: Type.Object(
    { status: ArticleStatus, attempt: Type.Integer({ minimum: 1 }), previous_reason: Nullable(Type.String()), previous_step: Nullable(Type.String()) },
    { description: "event: retried (a failed article queued again; names the failure it leaves behind; after that failure's final event)" },
  ),
  revision: Type.Object(
    {
      number: Type.Integer({ minimum: 1 }),
      status: Type.String({ enum: ["running", "completed", "failed"] }),
      action: Type.String(),
      section_index: Type.Integer({ minimum: 1 }),
      section_heading: Type.String(),
      version_id: Nullable(Type.Integer()),
      failure_reason: Nullable(Type.String()),
    },
    { description: "event: revision (a section revision started on the runner, completed or failed; after the run's final event, as version_created)" },
  ),
};

export const PageMeta = Type.Object(
  { current_page: Type.Integer({ minimum: 1 }), last_page: Type.Integer({ minimum: 1 }), per_page: Type.Integer({ minimum: 1 }), total: Type.Integer({ minimum: 0 }) },
  { description: "Pagination of a collection." },
);

// The article list's page meta: the spec's four integers and the list's cursor (list-cursor.ts).
export const ArticlePageMeta = Type.Composite(
  [PageMeta, Type.Object({ next_cursor: Nullable(Type.String({ description: "Pass as `cursor` to read the page after this one, in the time of a first page at any depth; null on the last page. Opaque." })) })],
  { description: "Pagination of the article list: page numbers and a cursor to the next page." },
);

// Error shapes (spec 7).
// Exactly the spec's shapes: the request's id is in the X-Request-Id header of every answer, not in the body.
export const GateError = Type.Object(
  {
    error: Type.String({ examples: ["Too Many Requests"] }),
    message: Type.String(),
    code: Type.String({ enum: ["UNAUTHENTICATED", "NO_ACTIVE_SUBSCRIPTION", "RATE_LIMIT_EXCEEDED"] }),
    retry_after: Type.Optional(Type.Integer({ minimum: 1, description: "Seconds to wait (429)." })),
  },
  { description: "A gate refusal on /v1 (401, 402, 429)." },
);
export const PlainError = Type.Object({ message: Type.String({ examples: ["Article not found."] }) }, { description: "A plain error: lookup and permission failures." });
export const ValidationError = Type.Object(
  {
    message: Type.String({ description: "The first message, and how many more.", examples: ["The title field must be at least 3 characters."] }),
    errors: Type.Record(Type.String(), Type.Array(Type.String()), {
      description: "Messages per field (keywords.2 for an item of a list).",
      examples: [{ title: ["The title field must be at least 3 characters."] }],
    }),
  },
  { description: "Validation failed (422)." },
);
export const ReorderRejection = Type.Object({ success: Type.Literal(false), message: Type.String() }, { description: "Reorder naming a step of another project (422)." });

// Compile-time drift checks: each presenter's output must be a value of its documented schema.
// The proto types status as any string and timestamps as optional, so those few keys are left to
// the test that validates real responses against the document.
type Loose = "status" | "created_at" | "updated_at";
type Fits<A extends B, B> = A;
type Check<A, S extends TSchema> = Fits<Omit<A, Loose>, Omit<Static<S>, Loose>>;
type Await<F extends (...args: never[]) => unknown> = Awaited<ReturnType<F>>;
type StepOut = ReturnType<typeof presentStep>;
export type SchemaChecks = [
  Check<PresentedArticle, typeof Article>,
  Check<StepOut, typeof Step>,
  Fits<Omit<ReturnType<typeof presentWorkflow>, Loose | "steps">, Omit<Static<typeof Workflow>, Loose | "steps">>,
  Check<ReturnType<typeof presentUser>, typeof User>,
  Check<Await<typeof estimateArticle>, typeof Estimate>,
  Check<Await<typeof stepBreakdown>, typeof StepBreakdown>,
  Check<PresentedDestination, typeof Destination>,
  Check<ReturnType<typeof presentCheck>, typeof DestinationCheck>,
];
