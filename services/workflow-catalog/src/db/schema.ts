// Tables of the workflow-catalog context, in its own Postgres schema.
import { bigint, bigserial, boolean, index, integer, jsonb, pgSchema, primaryKey, text, timestamp, unique } from "drizzle-orm/pg-core";

export const workflowCatalogSchema = pgSchema("workflow_catalog");

const createdAt = () => timestamp("created_at", { withTimezone: true }).notNull().defaultNow();
const updatedAt = () => timestamp("updated_at", { withTimezone: true }).notNull().defaultNow();

/** A project's custom workflow; it exists exactly as long as it has steps (spec 2.3 rule 1). */
export const workflows = workflowCatalogSchema.table(
  "workflows",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    projectId: bigint("project_id", { mode: "number" }).notNull(),
    slug: text("slug").notNull(),
    name: text("name").notNull(),
    description: text("description"),
    revision: integer("revision").notNull().default(1),
    /** Its articles get length control and brief repairs after the last step, as the built-ins' do. */
    briefRepairs: boolean("brief_repairs").notNull().default(false),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  // One workflow per type and project, even when two first steps of a new type race.
  (t) => [unique("workflows_project_slug").on(t.projectId, t.slug)],
);

export const workflowSteps = workflowCatalogSchema.table(
  "workflow_steps",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    workflowId: bigint("workflow_id", { mode: "number" })
      .notNull()
      .references(() => workflows.id, { onDelete: "cascade" }),
    // Kept on the step so "a step of another project" is one indexed comparison.
    projectId: bigint("project_id", { mode: "number" }).notNull(),
    stepNumber: integer("step_number").notNull(),
    stepName: text("step_name").notNull(),
    stepDescription: text("step_description"),
    stepIcon: text("step_icon"),
    system: text("system").notNull(),
    user: text("user").notNull(),
    outputFormat: text("output_format", { enum: ["text", "json", "markdown"] }).notNull(),
    timeoutSeconds: integer("timeout_seconds").notNull(),
    includeAdditionalContext: boolean("include_additional_context").notNull().default(false),
    includeAdditionalInstruction: boolean("include_additional_instruction").notNull().default(false),
    includeRequirements: boolean("include_requirements").notNull().default(false),
    includeResearch: boolean("include_research").notNull().default(false),
    includeOutline: boolean("include_outline").notNull().default(false),
    jsonSchema: jsonb("json_schema"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [unique("workflow_steps_number").on(t.workflowId, t.stepNumber), index("workflow_steps_project").on(t.projectId)],
);

/**
 * The step list of every revision of every custom workflow, written in the same transaction as the
 * change that made it. Never updated; kept after the workflow is deleted so an article pinned to
 * (workflow_id, revision) still runs the steps it started with (spec 2.3 rule 4).
 */
export const workflowSnapshots = workflowCatalogSchema.table(
  "workflow_snapshots",
  {
    workflowId: bigint("workflow_id", { mode: "number" }).notNull(),
    revision: integer("revision").notNull(),
    projectId: bigint("project_id", { mode: "number" }).notNull(),
    articleType: text("article_type").notNull(),
    steps: jsonb("steps").$type<SnapshotStepRecord[]>().notNull(),
    /** The workflow's brief_repairs at this revision. */
    briefRepairs: boolean("brief_repairs").notNull().default(false),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.workflowId, t.revision] })],
);

/**
 * Every revision of the built-in pipelines this deployment has run, recorded at start, so an
 * article pinned to a built-in revision can finish on it after the code moved on.
 */
export const builtinSnapshots = workflowCatalogSchema.table(
  "builtin_snapshots",
  {
    articleType: text("article_type").notNull(),
    revision: integer("revision").notNull(),
    steps: jsonb("steps").$type<SnapshotStepRecord[]>().notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.articleType, t.revision] })],
);

/** One step as a snapshot keeps it (the runner's view of a step). */
export interface SnapshotStepRecord {
  step_number: number;
  step_name: string;
  system: string;
  user: string;
  output_format: "text" | "json" | "markdown";
  timeout_seconds: number;
  include_additional_context: boolean;
  include_additional_instruction: boolean;
  include_requirements: boolean;
  include_research: boolean;
  include_outline: boolean;
  json_schema: unknown;
  /** research, outline, draft, meta or polish for built-in steps; "" for custom ones. */
  role: string;
}
