CREATE SCHEMA "workflow_catalog";
