-- Custom SQL migration file, put your code below! --
-- A revision's snapshot is what articles pinned to it run, so it must never change once written;
-- drizzle cannot declare triggers, hence this hand-written migration.
CREATE FUNCTION "workflow_catalog"."refuse_snapshot_update"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'workflow snapshots are immutable (workflow %, revision %)', OLD.workflow_id, OLD.revision;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "workflow_snapshots_immutable" BEFORE UPDATE ON "workflow_catalog"."workflow_snapshots"
  FOR EACH ROW EXECUTE FUNCTION "workflow_catalog"."refuse_snapshot_update"();
