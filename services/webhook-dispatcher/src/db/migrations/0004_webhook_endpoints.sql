CREATE TABLE "webhook_dispatcher"."endpoint_attempts" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"delivery_id" bigint NOT NULL,
	"attempted_at" timestamp with time zone NOT NULL,
	"status_code" integer,
	"error" text,
	"duration_ms" integer NOT NULL,
	"response_excerpt" text,
	"succeeded" boolean NOT NULL,
	"redelivery" boolean DEFAULT false NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhook_dispatcher"."endpoint_deliveries" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"endpoint_id" text NOT NULL,
	"project_id" bigint NOT NULL,
	"event_id" text NOT NULL,
	"event_type" text NOT NULL,
	"external_id" text,
	"body" text NOT NULL,
	"state" text DEFAULT 'pending' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhook_dispatcher"."endpoints" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" bigint NOT NULL,
	"account_id" bigint NOT NULL,
	"url" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"events" text[] NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"secret_nonce" text NOT NULL,
	"secret_ciphertext" text NOT NULL,
	"secret_created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "endpoint_attempts_delivery" ON "webhook_dispatcher"."endpoint_attempts" USING btree ("delivery_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "endpoint_deliveries_event" ON "webhook_dispatcher"."endpoint_deliveries" USING btree ("endpoint_id","event_id");--> statement-breakpoint
CREATE INDEX "endpoint_deliveries_endpoint" ON "webhook_dispatcher"."endpoint_deliveries" USING btree ("endpoint_id","id");--> statement-breakpoint
CREATE INDEX "endpoint_deliveries_article" ON "webhook_dispatcher"."endpoint_deliveries" USING btree ("external_id") WHERE "webhook_dispatcher"."endpoint_deliveries"."external_id" is not null;--> statement-breakpoint
CREATE INDEX "endpoints_project" ON "webhook_dispatcher"."endpoints" USING btree ("project_id");--> statement-breakpoint
CREATE INDEX "endpoints_account" ON "webhook_dispatcher"."endpoints" USING btree ("account_id");