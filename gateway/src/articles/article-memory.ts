// The gateway's memory of recently read article records, so polling an article does not cost a
// call to article-store each time. It holds only what article-store answered, keyed by the
// article, and never decides access: every read still authorizes the caller for the article's
// project and counts against the rate limit. An entry is dropped as soon as article-store
// announces a change to the article (kit/article-changes.ts) and lives a second at most; while
// the gateway is not listening to the announcements (before its subscription, or after losing
// it) nothing is remembered and everything remembered is forgotten. List pages read their
// records through here too (getMany), and concurrent readers of the same records share one read.
import type { RedisConnection } from "../../../services/kit/src/redis.ts";
import type { Article } from "../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import { articleChangesChannel, readArticleChange } from "../../../services/kit/src/article-changes.ts";
import type { Logger } from "../../../services/kit/src/logger.ts";
import { ChangeListener } from "../plugins/change-listener.ts";

const TTL_MS = 1_000;
const MAX_ENTRIES = 2_000;

interface Entry {
  article: Article;
  expires: number;
}

export class ArticleMemory {
  private readonly entries = new Map<string, Entry>();
  /** Batch reads in flight, by article id. */
  private readonly reading = new Map<string, Promise<Article | undefined>>();
  private readonly changes: ChangeListener;

  /** `subscriber` is a connection in subscriber mode (ChangeListener). */
  constructor(subscriber: RedisConnection, redisPrefix: string, logger: Logger) {
    this.changes = new ChangeListener(
      subscriber,
      articleChangesChannel(redisPrefix),
      logger,
      (message) => {
        // Generation announces every step of every article: read one only when something is remembered.
        const change = this.entries.size > 0 || this.reading.size > 0 ? readArticleChange(message) : undefined;
        if (change) this.forget(change.id, change.externalId);
      },
      () => {
        this.entries.clear();
        this.reading.clear();
      },
    );
  }

  /** Whether announcements are heard (nothing is remembered otherwise). */
  get listening(): boolean {
    return this.changes.listening;
  }

  /** The article by id or external_id, remembered or read with `lookup` (and then remembered). */
  async get(identifier: string, lookup: () => Promise<Article>): Promise<Article> {
    const now = Date.now();
    const key = identifier.toLowerCase();
    const cached = this.entries.get(key);
    if (cached && cached.expires > now) return cached.article;
    const mayRemember = this.changes.readStarts();
    const article = await lookup();
    if (mayRemember()) this.remember(article, now + TTL_MS);
    return article;
  }

  /**
   * The articles with these ids, in the same order, remembered ones from memory and the rest read
   * together with `lookup`; an id `lookup` does not answer is left out. An id another call is
   * already reading waits for that read: when entries expire together, the readers of a popular
   * list page share one read instead of each making its own.
   */
  async getMany(ids: readonly bigint[], lookup: (missing: bigint[]) => Promise<Article[]>): Promise<Article[]> {
    const now = Date.now();
    const found = new Map<bigint, Article | undefined>();
    const shared: Promise<void>[] = [];
    const missing: bigint[] = [];
    for (const id of ids) {
      const key = String(id);
      const cached = this.entries.get(key);
      if (cached && cached.expires > now) found.set(id, cached.article);
      else if (this.reading.has(key)) shared.push(this.reading.get(key)!.then((article) => void found.set(id, article)));
      else missing.push(id);
    }
    if (missing.length > 0) shared.push(this.readTogether(missing, lookup, now).then((read) => void missing.forEach((id, i) => found.set(id, read[i]))));
    await Promise.all(shared);
    return ids.flatMap((id) => found.get(id) ?? []);
  }

  /** Reads `ids` in one lookup, announced in `reading` meanwhile; answers in the order of `ids`. */
  private async readTogether(ids: bigint[], lookup: (missing: bigint[]) => Promise<Article[]>, now: number): Promise<(Article | undefined)[]> {
    const mayRemember = this.changes.readStarts();
    const read = lookup(ids).then((articles) => new Map(articles.map((a) => [a.id, a])));
    const shares = ids.map((id) => {
      const share = read.then((byId) => byId.get(id));
      share.catch(() => {}); // a failed read reaches its own caller, and any reader sharing it
      this.reading.set(String(id), share);
      return share;
    });
    try {
      const byId = await read;
      if (mayRemember()) for (const article of byId.values()) this.remember(article, now + TTL_MS);
      return ids.map((id) => byId.get(id));
    } finally {
      // Unless a change already withdrew it (and a later read may have taken its place).
      ids.forEach((id, i) => this.reading.get(String(id)) === shares[i] && this.reading.delete(String(id)));
    }
  }

  private remember(article: Article, expires: number): void {
    if (this.entries.size >= MAX_ENTRIES) {
      // Oldest first (a Map keeps insertion order).
      let drop = MAX_ENTRIES / 4;
      for (const key of this.entries.keys()) {
        if (drop-- <= 0) break;
        this.entries.delete(key);
      }
    }
    const entry = { article, expires };
    this.entries.set(String(article.id), entry);
    this.entries.set(article.externalId.toLowerCase(), entry);
  }

  /**
   * An article seen ending on its event log, which can be read before article-store's
   * announcement arrives: a client that saw `completed` must not then read the article running.
   */
  forgetEnded(externalId: string): void {
    this.changes.changed();
    const entry = this.entries.get(externalId.toLowerCase());
    if (entry) this.forget(entry.article.id, externalId);
  }

  private forget(id: bigint, externalId: string): void {
    // A read already under way may predate the change: later readers must not share it.
    this.reading.delete(String(id));
    this.entries.delete(String(id));
    this.entries.delete(externalId.toLowerCase());
  }
}
