-- Step outputs (an article's draft is about 6 KB for 1,000 words) are compressed when stored: lz4
-- instead of Postgres's default pglz, about 30 µs of CPU a row instead of 150 here. It applies to
-- rows written from now on; a server built without lz4 keeps pglz rather than failing to start.
DO $$
BEGIN
  EXECUTE 'ALTER TABLE "generation_runner"."step_checkpoints" ALTER COLUMN "output" SET COMPRESSION lz4';
  EXECUTE 'ALTER TABLE "generation_runner"."finishing_checkpoints" ALTER COLUMN "output" SET COMPRESSION lz4';
EXCEPTION WHEN others THEN
  RAISE NOTICE 'lz4 is not available here: step outputs stay compressed with pglz (%)', SQLERRM;
END $$;
