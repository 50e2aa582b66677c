CREATE TABLE "generation_runner"."article_images" (
	"external_id" text NOT NULL,
	"position" integer NOT NULL,
	"model" text NOT NULL,
	"size" text NOT NULL,
	"prompt" text NOT NULL,
	"media_type" text NOT NULL,
	"data" "bytea" NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "article_images_external_id_position_pk" PRIMARY KEY("external_id","position")
);
--> statement-breakpoint
CREATE TABLE "generation_runner"."finishing_checkpoints" (
	"external_id" text NOT NULL,
	"task" text NOT NULL,
	"model" text NOT NULL,
	"prompt_tokens" integer NOT NULL,
	"completion_tokens" integer NOT NULL,
	"cost" numeric(20, 12) NOT NULL,
	"output" text NOT NULL,
	"completed_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "finishing_checkpoints_external_id_task_pk" PRIMARY KEY("external_id","task")
);
--> statement-breakpoint
CREATE TABLE "generation_runner"."models" (
	"id" text PRIMARY KEY NOT NULL,
	"active" boolean DEFAULT true NOT NULL,
	"supports_batch" boolean DEFAULT false NOT NULL,
	"input_price_per_million" numeric(20, 12) NOT NULL,
	"output_price_per_million" numeric(20, 12) NOT NULL,
	"fallback_model" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "generation_runner"."research_checkpoints" (
	"external_id" text PRIMARY KEY NOT NULL,
	"query" text NOT NULL,
	"sources" jsonb NOT NULL,
	"questions" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "generation_runner"."runs" (
	"external_id" text PRIMARY KEY NOT NULL,
	"workflow_id" bigint NOT NULL,
	"workflow_revision" integer NOT NULL,
	"article_type" text NOT NULL,
	"requested_model" text NOT NULL,
	"pickups" integer DEFAULT 1 NOT NULL,
	"last_error" text,
	"batch_id" text,
	"batch_polls" integer DEFAULT 0 NOT NULL,
	"humanized_version_id" bigint,
	"webhook_enqueued_at" timestamp with time zone,
	"finished_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "generation_runner"."step_checkpoints" (
	"external_id" text NOT NULL,
	"step_number" integer NOT NULL,
	"step_name" text NOT NULL,
	"model" text NOT NULL,
	"used_fallback" boolean DEFAULT false NOT NULL,
	"batched" boolean DEFAULT false NOT NULL,
	"prompt_tokens" integer NOT NULL,
	"completion_tokens" integer NOT NULL,
	"cost" numeric(20, 12) NOT NULL,
	"output" text NOT NULL,
	"completed_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "step_checkpoints_external_id_step_number_pk" PRIMARY KEY("external_id","step_number")
);
