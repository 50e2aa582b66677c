CREATE SCHEMA "generation_runner";
