// The gateway's memory of recently read article records, so polling an article does not cost a
// call to article-store each time. It holds only what article-store answered, keyed by the
// article, and never decides access: every read still authorizes the caller for the article's
// project and counts against the rate limit. An entry is dropped as soon as article-store
// announces a change to the article (kit/article-changes.ts) and lives a second at most; while
// the gateway is not listening to the announcements (before its subscription, or after losing
// it) nothing is remembered and everything remembered is forgotten.
import type IORedis from "ioredis";
import type { Article } from "../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import { articleChangesChannel, readArticleChange } from "../../../services/kit/src/article-changes.ts";
import type { Logger } from "../../../services/kit/src/logger.ts";

const TTL_MS = 1_000;
const MAX_ENTRIES = 2_000;

interface Entry {
  article: Article;
  expires: number;
}

export class ArticleMemory {
  private readonly entries = new Map<string, Entry>();
  private listening = false;
  /** Counts the changes heard, so a read that overlapped one is not remembered. */
  private changesHeard = 0;

  /** `subscriber` is a connection of its own: it is put in subscriber mode. */
  constructor(subscriber: IORedis, redisPrefix: string, logger: Logger) {
    const channel = articleChangesChannel(redisPrefix);
    const stopListening = () => {
      this.listening = false;
      this.entries.clear();
    };
    subscriber.on("message", (from, message) => {
      if (from !== channel) return;
      this.changesHeard++;
      // Generation announces every step of every article: read one only when something is remembered.
      const change = this.entries.size > 0 ? readArticleChange(message) : undefined;
      if (change) this.forget(change.id, change.externalId);
    });
    subscriber.on("close", stopListening);
    subscriber.on("reconnecting", stopListening);
    // ioredis subscribes again after a reconnect; remembering resumes once it has.
    subscriber.on("ready", () => {
      subscriber.subscribe(channel).then(
        () => (this.listening = true),
        (error) => logger.warn("could not listen to article changes", { error: (error as Error).message }),
      );
    });
    if (subscriber.status === "ready") subscriber.emit("ready");
  }

  /** The article by id or external_id, remembered or read with `lookup` (and then remembered). */
  async get(identifier: string, lookup: () => Promise<Article>): Promise<Article> {
    const now = Date.now();
    const key = identifier.toLowerCase();
    const cached = this.entries.get(key);
    if (cached && cached.expires > now) return cached.article;
    const wasListening = this.listening;
    const heard = this.changesHeard;
    const article = await lookup();
    // Remembered only if no change, and no gap in listening, could have overtaken the read.
    if (wasListening && this.listening && heard === this.changesHeard) this.remember(article, now + TTL_MS);
    return article;
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

  private forget(id: bigint, externalId: string): void {
    this.entries.delete(String(id));
    this.entries.delete(externalId.toLowerCase());
  }
}
