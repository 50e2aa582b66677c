// Article responses written from JSON kept per article record. A polled or listed article is
// remembered as one record object (article-memory.ts) until it changes; its public JSON is made
// once per record and project name instead of on every read, which for a list page of long
// articles was most of the gateway's work. It is kept as UTF-8 bytes, not text, and an answer is a
// Blob of those bytes: one copy of them into the body Bun sends, where joining the texts built a
// string of the whole page that Response encoded again on every request (a page of 20
// 10,000-word articles is 2.4 MB, and one non-Latin-1 character in any of them makes the joined
// text two bytes a character). The Blob goes out inside a Response, as a body Elysia would
// otherwise serve as a file (answering Range requests). Kept in
// a WeakMap on the record object, so the bytes go when the record is dropped, and a changed
// article (a new record) is written afresh.
import type { Article } from "../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import { presentArticle, type ProjectRef } from "../../../services/kit/src/public-article.ts";
import type { ArticleWithProject } from "./article-with-project.ts";

interface Written {
  projectId: bigint;
  projectName: string;
  json: Uint8Array<ArrayBuffer>;
}

/** The JSON content type Elysia gives an object body. */
const JSON_CONTENT_TYPE = "application/json;charset=utf-8";
const written = new WeakMap<Article, Written>();
const utf8 = new TextEncoder();

/** The article's public JSON (spec 2.2) as UTF-8. */
export function articleJson(article: Article, project: ProjectRef): Uint8Array<ArrayBuffer> {
  const known = written.get(article);
  if (known && known.projectId === project.id && known.projectName === project.name) return known.json;
  const json = utf8.encode(JSON.stringify(presentArticle(article, project)));
  written.set(article, { projectId: project.id, projectName: project.name, json });
  return json;
}

const DATA = utf8.encode('{"success":true,"data":');
const PAGE_DATA = utf8.encode('{"success":true,"data":[');
const COMMA = utf8.encode(",");
const CLOSE = utf8.encode("}");

const jsonResponse = (parts: Uint8Array<ArrayBuffer>[]) => new Response(new Blob(parts, { type: JSON_CONTENT_TYPE }));

/** `{"success":true,"data":<the article>}`. */
export function articleResponse({ article, project }: ArticleWithProject): Response {
  return jsonResponse([DATA, articleJson(article, project), CLOSE]);
}

/** `{"success":true,"data":[<the articles>],"meta":<meta>}`. */
export function articlePageResponse(articles: readonly ArticleWithProject[], meta: object): Response {
  const parts: Uint8Array<ArrayBuffer>[] = [PAGE_DATA];
  articles.forEach(({ article, project }, i) => {
    if (i > 0) parts.push(COMMA);
    parts.push(articleJson(article, project));
  });
  parts.push(utf8.encode(`],"meta":${JSON.stringify(meta)}}`));
  return jsonResponse(parts);
}
