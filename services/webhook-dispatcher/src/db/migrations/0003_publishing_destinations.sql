CREATE TABLE "webhook_dispatcher"."destinations" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"project_id" bigint NOT NULL,
	"kind" text NOT NULL,
	"name" text NOT NULL,
	"site_url" text NOT NULL,
	"username" text,
	"defaults" jsonb NOT NULL,
	"credential_nonce" text NOT NULL,
	"credential_ciphertext" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "destinations_project" ON "webhook_dispatcher"."destinations" USING btree ("project_id","id");