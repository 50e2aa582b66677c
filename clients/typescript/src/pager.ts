// Walking the article list (GET /v1/articles) page after page by its cursor: each page is asked
// for with the `meta.next_cursor` of the one before, so page 10,000 costs what page 1 does, and
// an article created during the walk (newer than every page left to read) never shifts an older
// one onto a second page or off every page, as moving `page` by one can.
import type { Client } from "./generated/client/index.js";
import { listArticles } from "./generated/sdk.gen.js";
import type { Article, ArticlePageMeta, ListArticlesData } from "./generated/types.gen.js";

/** What to list: the list's filters and page size (the cursor is the pager's). */
export type ArticleListFilter = Omit<NonNullable<ListArticlesData["query"]>, "cursor" | "page">;

/** One page of the walk: its articles and its meta (current_page counts the pages walked). */
export interface ArticleListPage {
  articles: Article[];
  meta: ArticlePageMeta;
}

/**
 * Every page of the list, newest first, from the first to the last; stops after the page whose
 * meta.next_cursor is null. Errors are thrown (the client's error classes with
 * createArticleClient). Pass a `signal` to stop between pages.
 */
export async function* articlePages(client: Client, filter: ArticleListFilter = {}, signal?: AbortSignal): AsyncGenerator<ArticleListPage> {
  let cursor: string | undefined;
  do {
    signal?.throwIfAborted();
    const { data } = await listArticles({ client, query: { ...filter, cursor }, signal, throwOnError: true });
    yield { articles: data.data, meta: data.meta };
    cursor = data.meta.next_cursor ?? undefined;
  } while (cursor !== undefined);
}

/** Every article of the list, newest first, one at a time (articlePages underneath). */
export async function* listedArticles(client: Client, filter: ArticleListFilter = {}, signal?: AbortSignal): AsyncGenerator<Article> {
  for await (const page of articlePages(client, filter, signal)) yield* page.articles;
}
