CREATE TABLE "workflow_catalog"."builtin_snapshots" (
	"article_type" text NOT NULL,
	"revision" integer NOT NULL,
	"steps" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "builtin_snapshots_article_type_revision_pk" PRIMARY KEY("article_type","revision")
);
--> statement-breakpoint
CREATE TABLE "workflow_catalog"."workflow_snapshots" (
	"workflow_id" bigint NOT NULL,
	"revision" integer NOT NULL,
	"project_id" bigint NOT NULL,
	"article_type" text NOT NULL,
	"steps" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "workflow_snapshots_workflow_id_revision_pk" PRIMARY KEY("workflow_id","revision")
);
--> statement-breakpoint
CREATE TABLE "workflow_catalog"."workflow_steps" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"workflow_id" bigint NOT NULL,
	"project_id" bigint NOT NULL,
	"step_number" integer NOT NULL,
	"step_name" text NOT NULL,
	"step_description" text,
	"step_icon" text,
	"system" text NOT NULL,
	"user" text NOT NULL,
	"output_format" text NOT NULL,
	"timeout_seconds" integer NOT NULL,
	"include_additional_context" boolean DEFAULT false NOT NULL,
	"include_additional_instruction" boolean DEFAULT false NOT NULL,
	"include_requirements" boolean DEFAULT false NOT NULL,
	"include_research" boolean DEFAULT false NOT NULL,
	"include_outline" boolean DEFAULT false NOT NULL,
	"json_schema" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "workflow_steps_number" UNIQUE("workflow_id","step_number")
);
--> statement-breakpoint
CREATE TABLE "workflow_catalog"."workflows" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"project_id" bigint NOT NULL,
	"slug" text NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"revision" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "workflows_project_slug" UNIQUE("project_id","slug")
);
--> statement-breakpoint
ALTER TABLE "workflow_catalog"."workflow_steps" ADD CONSTRAINT "workflow_steps_workflow_id_workflows_id_fk" FOREIGN KEY ("workflow_id") REFERENCES "workflow_catalog"."workflows"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "workflow_steps_project" ON "workflow_catalog"."workflow_steps" USING btree ("project_id");