// Article responses written from JSON text kept per article record. A polled or listed article
// is remembered as one record object (article-memory.ts) until it changes; its public JSON is
// made once per record and project name instead of on every read, which for a list page of
// long articles was most of the gateway's work. Kept in a WeakMap on the record object, so the
// text goes when the record is dropped, and a changed article (a new record) is written afresh.
import type { Article } from "../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import { presentArticle, type ProjectRef } from "../../../services/kit/src/public-article.ts";

interface Written {
  projectId: bigint;
  projectName: string;
  json: string;
}

const written = new WeakMap<Article, Written>();

/** The article's public JSON (spec 2.2) as text. */
export function articleJson(article: Article, project: ProjectRef): string {
  const known = written.get(article);
  if (known && known.projectId === project.id && known.projectName === project.name) return known.json;
  const json = JSON.stringify(presentArticle(article, project));
  written.set(article, { projectId: project.id, projectName: project.name, json });
  return json;
}

/** The JSON content type Elysia gives an object body, for bodies written as text here. */
export const JSON_CONTENT_TYPE = "application/json;charset=utf-8";
