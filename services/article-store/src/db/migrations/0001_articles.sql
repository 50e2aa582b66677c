CREATE TABLE "article_store"."article_versions" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"article_id" bigint NOT NULL,
	"number" integer NOT NULL,
	"kind" text NOT NULL,
	"content" text NOT NULL,
	"word_count" integer NOT NULL,
	"ai_detection_score" integer,
	"originality_checked_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "article_store"."articles" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"external_id" uuid NOT NULL,
	"account_id" bigint NOT NULL,
	"project_id" bigint NOT NULL,
	"title" text NOT NULL,
	"description" text,
	"content" text,
	"original_content" text,
	"current_version_id" bigint,
	"published_version_id" bigint,
	"status" text NOT NULL,
	"article_type" text NOT NULL,
	"target_keyword" text,
	"keywords" text[] DEFAULT '{}'::text[] NOT NULL,
	"target_word_count" integer NOT NULL,
	"actual_word_count" integer DEFAULT 0 NOT NULL,
	"tone" text NOT NULL,
	"point_of_view" text NOT NULL,
	"language" text NOT NULL,
	"country_targeting" text,
	"ai_model_used" text,
	"cost" numeric(20, 12) DEFAULT '0' NOT NULL,
	"current_step" text,
	"humanize" boolean DEFAULT false NOT NULL,
	"ai_detection_score" integer,
	"originality_checked_at" timestamp with time zone,
	"additional_context" text,
	"webhook_url" text,
	"settings" jsonb NOT NULL,
	"failure_reason" text,
	"delivery_failed_at" timestamp with time zone,
	"delivery_failure_reason" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "articles_external_id_unique" UNIQUE("external_id")
);
--> statement-breakpoint
CREATE TABLE "article_store"."brand_voices" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"project_id" bigint NOT NULL,
	"name" text NOT NULL,
	"description" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "article_store"."delivery_attempts" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"article_id" bigint NOT NULL,
	"delivery_id" text NOT NULL,
	"attempt" integer NOT NULL,
	"attempted_at" timestamp with time zone NOT NULL,
	"status_code" integer,
	"error" text,
	"duration_ms" integer NOT NULL,
	"succeeded" boolean NOT NULL,
	"version_id" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "article_store"."idempotency_keys" (
	"account_id" bigint NOT NULL,
	"key" text NOT NULL,
	"request_hash" text NOT NULL,
	"external_id" uuid NOT NULL,
	"article_id" bigint,
	"first_response" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "idempotency_keys_account_id_key_pk" PRIMARY KEY("account_id","key")
);
--> statement-breakpoint
CREATE TABLE "article_store"."image_presets" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"project_id" bigint NOT NULL,
	"name" text NOT NULL,
	"style" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "article_store"."outbox" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"article_id" bigint NOT NULL,
	"external_id" uuid NOT NULL,
	"queue" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"sent_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "article_store"."research_sources" (
	"article_id" bigint NOT NULL,
	"position" integer NOT NULL,
	"title" text NOT NULL,
	"url" text NOT NULL,
	"word_count" integer NOT NULL,
	"fetched_at" timestamp with time zone NOT NULL,
	CONSTRAINT "research_sources_article_id_position_pk" PRIMARY KEY("article_id","position")
);
--> statement-breakpoint
ALTER TABLE "article_store"."article_versions" ADD CONSTRAINT "article_versions_article_id_articles_id_fk" FOREIGN KEY ("article_id") REFERENCES "article_store"."articles"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "article_store"."delivery_attempts" ADD CONSTRAINT "delivery_attempts_article_id_articles_id_fk" FOREIGN KEY ("article_id") REFERENCES "article_store"."articles"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "article_store"."idempotency_keys" ADD CONSTRAINT "idempotency_keys_article_id_articles_id_fk" FOREIGN KEY ("article_id") REFERENCES "article_store"."articles"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "article_store"."outbox" ADD CONSTRAINT "outbox_article_id_articles_id_fk" FOREIGN KEY ("article_id") REFERENCES "article_store"."articles"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "article_store"."research_sources" ADD CONSTRAINT "research_sources_article_id_articles_id_fk" FOREIGN KEY ("article_id") REFERENCES "article_store"."articles"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "article_versions_number" ON "article_store"."article_versions" USING btree ("article_id","number");--> statement-breakpoint
CREATE UNIQUE INDEX "article_versions_kind" ON "article_store"."article_versions" USING btree ("article_id","kind");--> statement-breakpoint
CREATE INDEX "articles_project_newest" ON "article_store"."articles" USING btree ("project_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "articles_project_status_newest" ON "article_store"."articles" USING btree ("project_id","status","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "brand_voices_project" ON "article_store"."brand_voices" USING btree ("project_id");--> statement-breakpoint
CREATE UNIQUE INDEX "delivery_attempts_once" ON "article_store"."delivery_attempts" USING btree ("article_id","delivery_id","attempt");--> statement-breakpoint
CREATE INDEX "delivery_attempts_article" ON "article_store"."delivery_attempts" USING btree ("article_id","attempted_at");--> statement-breakpoint
CREATE INDEX "idempotency_keys_created" ON "article_store"."idempotency_keys" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "image_presets_project" ON "article_store"."image_presets" USING btree ("project_id");--> statement-breakpoint
CREATE INDEX "outbox_unsent" ON "article_store"."outbox" USING btree ("id") WHERE "article_store"."outbox"."sent_at" is null;