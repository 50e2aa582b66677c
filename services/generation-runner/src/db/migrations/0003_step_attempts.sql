CREATE TABLE "generation_runner"."step_attempts" (
	"external_id" text NOT NULL,
	"step_number" integer NOT NULL,
	"step_name" text NOT NULL,
	"attempts" integer DEFAULT 1 NOT NULL,
	"first_started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_started_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "step_attempts_external_id_step_number_pk" PRIMARY KEY("external_id","step_number")
);
