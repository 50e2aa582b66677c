CREATE TABLE "webhook_dispatcher"."messages" (
	"id" text PRIMARY KEY NOT NULL,
	"external_id" text NOT NULL,
	"version_id" bigint NOT NULL,
	"project_id" bigint NOT NULL,
	"url" text NOT NULL,
	"body" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhook_dispatcher"."signing_secrets" (
	"project_id" bigint PRIMARY KEY NOT NULL,
	"nonce" text NOT NULL,
	"ciphertext" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "messages_external_id" ON "webhook_dispatcher"."messages" USING btree ("external_id");