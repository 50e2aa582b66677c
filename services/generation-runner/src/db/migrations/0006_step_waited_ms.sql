-- How long each step's and finishing task's model call waited for its provider; older rows read 0 (a constant default rewrites no row).
ALTER TABLE "generation_runner"."finishing_checkpoints" ADD COLUMN "waited_ms" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "generation_runner"."step_checkpoints" ADD COLUMN "waited_ms" integer DEFAULT 0 NOT NULL;