CREATE SCHEMA "article_store";
