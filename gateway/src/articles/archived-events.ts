// An ended article's event log as article-store archived it (ArticleStoreService.ListArticleEvents):
// where the event streams find the events Redis no longer holds once the article has ended. Read
// through article-store's contract, never its database, a page of at most 1,000 events at a time.
import type { Client } from "@connectrpc/connect";
import type { ArticleStoreService } from "../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import { readLoggedEvent, type LoggedArticleEvent } from "../../../services/kit/src/article-events.ts";
import type { EventArchive } from "./event-stream.ts";

const PAGE = 1000;

export class ArchivedArticleEvents implements EventArchive {
  constructor(private readonly articles: Client<typeof ArticleStoreService>) {}

  async after(externalId: string, afterId: string): Promise<LoggedArticleEvent[]> {
    const events: LoggedArticleEvent[] = [];
    for (let cursor = afterId; ; ) {
      const page = await this.articles.listArticleEvents({ externalId, afterEventId: cursor, limit: PAGE });
      for (const archived of page.events) {
        const event = readLoggedEvent(archived);
        if (event) events.push(event);
      }
      if (page.events.length < PAGE) return events;
      cursor = page.events[page.events.length - 1]!.id;
    }
  }

  async lastId(externalId: string): Promise<string | undefined> {
    return (await this.articles.listArticleEvents({ externalId, limit: 1 })).lastEventId || undefined;
  }
}
