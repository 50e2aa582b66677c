CREATE TABLE "generation_runner"."image_bytes" (
	"image_id" text PRIMARY KEY NOT NULL,
	"data" "bytea" NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "generation_runner"."article_images" ADD COLUMN "image_id" text;--> statement-breakpoint
ALTER TABLE "generation_runner"."article_images" ADD COLUMN "alt" text;--> statement-breakpoint
ALTER TABLE "generation_runner"."article_images" ADD COLUMN "aspect_ratio" text;--> statement-breakpoint
ALTER TABLE "generation_runner"."article_images" ADD COLUMN "width" integer;--> statement-breakpoint
ALTER TABLE "generation_runner"."article_images" ADD COLUMN "height" integer;--> statement-breakpoint
ALTER TABLE "generation_runner"."article_images" ADD COLUMN "byte_size" integer;--> statement-breakpoint
ALTER TABLE "generation_runner"."article_images" ADD COLUMN "sha256" text;--> statement-breakpoint
ALTER TABLE "generation_runner"."article_images" ADD COLUMN "storage" text;--> statement-breakpoint
-- Images stored before they had URLs: a random public id (128 bits from two v4 UUIDs' randomness),
-- their size read from the PNG header, and their bytes moved to the embedded image store.
UPDATE "generation_runner"."article_images" SET
	"image_id" = substr(encode(sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8')), 'hex'), 1, 32),
	"alt" = '',
	"aspect_ratio" = '',
	"width" = CASE WHEN length("data") >= 24 AND substring("data" from 13 for 4) = '\x49484452'::bytea
		THEN (get_byte("data", 16) << 24) | (get_byte("data", 17) << 16) | (get_byte("data", 18) << 8) | get_byte("data", 19)
		ELSE split_part("size", 'x', 1)::integer END,
	"height" = CASE WHEN length("data") >= 24 AND substring("data" from 13 for 4) = '\x49484452'::bytea
		THEN (get_byte("data", 20) << 24) | (get_byte("data", 21) << 16) | (get_byte("data", 22) << 8) | get_byte("data", 23)
		ELSE split_part("size", 'x', 2)::integer END,
	"byte_size" = length("data"),
	"sha256" = encode(sha256("data"), 'hex'),
	"storage" = 'postgres';--> statement-breakpoint
INSERT INTO "generation_runner"."image_bytes" ("image_id", "data", "created_at") SELECT "image_id", "data", "created_at" FROM "generation_runner"."article_images";--> statement-breakpoint
ALTER TABLE "generation_runner"."article_images" ALTER COLUMN "image_id" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "generation_runner"."article_images" ALTER COLUMN "alt" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "generation_runner"."article_images" ALTER COLUMN "aspect_ratio" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "generation_runner"."article_images" ALTER COLUMN "width" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "generation_runner"."article_images" ALTER COLUMN "height" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "generation_runner"."article_images" ALTER COLUMN "byte_size" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "generation_runner"."article_images" ALTER COLUMN "sha256" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "generation_runner"."article_images" ALTER COLUMN "storage" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "generation_runner"."runs" ADD COLUMN "omitted_images" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "generation_runner"."article_images" DROP COLUMN "data";--> statement-breakpoint
ALTER TABLE "generation_runner"."article_images" ADD CONSTRAINT "article_images_image_id_unique" UNIQUE("image_id");
