-- Each model's provider rate limits as the operator sets them; NULL: not configured (the runner then
-- learns them from the provider's x-ratelimit headers). Nullable columns without a default: adding
-- them rewrites no row.
ALTER TABLE "generation_runner"."models" ADD COLUMN "requests_per_minute" integer;--> statement-breakpoint
ALTER TABLE "generation_runner"."models" ADD COLUMN "tokens_per_minute" bigint;--> statement-breakpoint
ALTER TABLE "generation_runner"."models" ADD COLUMN "max_concurrent_calls" integer;