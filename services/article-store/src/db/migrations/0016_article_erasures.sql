CREATE TABLE "article_store"."article_erasures" (
	"article_id" bigint PRIMARY KEY NOT NULL,
	"external_id_sha256" text NOT NULL,
	"account_id" bigint NOT NULL,
	"project_id" bigint NOT NULL,
	"words_billed" bigint NOT NULL,
	"erased_by_key_id" bigint,
	"erased_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "article_erasures_external_id_sha256_unique" UNIQUE("external_id_sha256")
);
