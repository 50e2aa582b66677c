CREATE SCHEMA "webhook_dispatcher";
