// GET /v1/articles/{id}/events: Server-Sent Events from the article's durable event log
// (services/kit/src/article-events.ts). One blocking XREAD loop per gateway (per event-log shard on a
// Redis Cluster, whose multi-key reads stay within a slot) reads every watched
// article's stream and fans each event out to that article's open clients, so an open stream
// costs a map entry and a response, never a query of its own; one timer writes the heartbeat
// comment to all of them. A client starts from the article's current state, or from the event
// after its Last-Event-ID, catching up with one XRANGE before it joins the loop. Once an article
// has ended its log moves to article-store's archive and its stream leaves Redis soon after, so a
// client catching up on an ended article reads the archive too (ListArticleEvents), with the same
// ids and data the stream had.
import { duplicateConnection, hashTagOf, isCluster, onRedisError, type RedisConnection } from "../../../services/kit/src/redis.ts";
import type { Article } from "../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import {
  articleEventsKey,
  compareStreamIds,
  isCancelledArticle,
  isFinalEvent,
  isStreamId,
  readStreamEntry,
  type LoggedArticleEvent,
  type StreamEntry,
} from "../../../services/kit/src/article-events.ts";
import { envInt, failOnConfigError } from "../../../services/kit/src/config.ts";
import type { Logger } from "../../../services/kit/src/logger.ts";
import { presentCost } from "../../../services/kit/src/public-article.ts";
import { validationError } from "../errors.ts";
import { isRunningStatus } from "../../../services/kit/src/rules/article-statuses.ts";

// Proxies commonly close a connection silent for 30-60 s.
const HEARTBEAT_MS = failOnConfigError(() => envInt(process.env, "EVENTS_HEARTBEAT_MS", 15_000, { min: 100, max: 600_000 }));
// How long one XREAD blocks: also how soon an article watched for the first time joins the loop.
const BLOCK_MS = 1_000;
const READ_COUNT = 200;
// A blocking read that has not answered this long after its block ended is given up and sent
// again: its connection may be to a node that is no longer the master of its keys (a failover),
// where it would wait for writes that go elsewhere.
const STALLED_READ_MS = 3_000;
const RETRY_MS = 1_000;
/** The id of the state event sent before an article's log has any event. */
const START_ID = "0-0";

const encoder = new TextEncoder();

function frame(id: string, event: string, data: unknown): Uint8Array {
  return encoder.encode(`id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

const HEARTBEAT = encoder.encode(": heartbeat\n\n");

/** The Last-Event-ID a reconnecting client sends; 422 when it is not one of ours. */
export function lastEventIdOf(headers: Headers): string | undefined {
  const value = headers.get("last-event-id")?.trim();
  if (!value) return undefined;
  if (!isStreamId(value)) throw validationError({ "Last-Event-ID": ["Last-Event-ID must be the id of an event of this stream, e.g. \"1718000000000-0\"."] });
  return value;
}

/** The article as it stands: the first event of a fresh stream, or the final one of an ended article. */
function currentEvent(article: Article): { event: string; data: Record<string, unknown> } {
  const cost = presentCost(article.cost);
  if (isRunningStatus(article.status)) {
    return { event: "state", data: { status: article.status, current_step: article.currentStep ?? null, cost } };
  }
  if (article.status === "failed") {
    return { event: "failed", data: { status: "failed", cost, reason: article.failureReason ?? null, cancelled: isCancelledArticle(article) } };
  }
  if (article.status === "published") {
    return { event: "published", data: { status: "published", cost, published_version_id: article.publishedVersionId === undefined ? null : Number(article.publishedVersionId) } };
  }
  return {
    event: "completed",
    data: { status: "completed", cost, actual_word_count: article.actualWordCount, ai_model_used: article.aiModelUsed ?? null, current_version_id: article.currentVersionId === undefined ? null : Number(article.currentVersionId) },
  };
}

/** An ended article's archived log (articles/archived-events.ts). */
export interface EventArchive {
  /** Every archived event after `afterId`, oldest first. */
  after(externalId: string, afterId: string): Promise<LoggedArticleEvent[]>;
  /** The id of the newest archived event, if any. */
  lastId(externalId: string): Promise<string | undefined>;
}

const isRunning = (article: Article) => isRunningStatus(article.status);

/** Two runs of one log's events, each in id order, as one run with each event once. */
function mergedById(a: readonly LoggedArticleEvent[], b: readonly LoggedArticleEvent[]): LoggedArticleEvent[] {
  const byId = new Map([...a, ...b].map((e) => [e.id, e]));
  return [...byId.values()].sort((x, y) => compareStreamIds(x.id, y.id));
}

/**
 * Where a watch of an article starts: its current record, and the log position to follow from;
 * `release` is called once when the stream ends, however it ends (the open-stream lease it held,
 * open-streams.ts, is given back).
 */
export interface WatchStart {
  externalId: string;
  current: Article;
  from: { latestId: string } | { lastEventId: string };
  release(): void;
}

/** Where a watcher's events go: an SSE response (open) or a gRPC stream (grpc/article-service.ts). */
export interface EventSink {
  event(id: string, event: string, data: Record<string, unknown>): void;
  /** Keeps an idle connection open (SSE sends a comment). */
  heartbeat?(): void;
  /** The stream ended (after the final event, or because the client left). */
  close(): void;
}

/** One open client stream of one article. */
class Watcher {
  private catchingUp = true;
  private held: LoggedArticleEvent[] = [];
  ended = false;

  constructor(
    readonly key: string,
    private cursor: string,
    private readonly sink: EventSink,
  ) {}

  deliver(event: LoggedArticleEvent): void {
    if (this.ended) return;
    if (this.catchingUp) {
      this.held.push(event);
      return;
    }
    if (compareStreamIds(event.id, this.cursor) <= 0) return;
    this.cursor = event.id;
    this.sink.event(event.id, event.event, event.data);
    if (isFinalEvent(event.event)) this.end();
  }

  /** Sends what the log held before the client joined, then what the loop delivered meanwhile. */
  caughtUp(missed: LoggedArticleEvent[]): void {
    this.catchingUp = false;
    const held = this.held;
    this.held = [];
    for (const event of [...missed, ...held]) this.deliver(event);
  }

  /** The final event the record shows, when the log did not carry one (expired, or not yet written). */
  endWith(article: Article): void {
    if (this.ended) return;
    const { event, data } = currentEvent(article);
    this.sink.event(this.cursor, event, data);
    this.end();
  }

  heartbeat(): void {
    if (!this.ended && !this.catchingUp) this.sink.heartbeat?.();
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.sink.close();
  }
}

interface Watched {
  cursor: string;
  watchers: Set<Watcher>;
}

/** One blocking XREAD loop and its connection, over the watched keys that one command may read together. */
interface Lane {
  reader: RedisConnection;
  keys: Set<string>;
  reading: boolean;
}

export class ArticleEventHub {
  private readonly watched = new Map<string, Watched>();
  // One lane on a single server; on a cluster one per event-log shard (its keys share a slot).
  private readonly lanes = new Map<string, Lane>();
  private stopped = false;
  private readonly heartbeat: ReturnType<typeof setInterval>;

  /** `redis` answers the catch-up reads; each blocking loop gets a connection of its own. */
  constructor(
    private readonly redis: RedisConnection,
    private readonly redisPrefix: string,
    private readonly logger: Logger,
    private readonly archive: EventArchive,
    /** Told when a client is about to get an article's final event. */
    private readonly onEnded?: (externalId: string) => void,
  ) {
    this.heartbeat = setInterval(() => {
      for (const { watchers } of this.watched.values()) for (const w of watchers) w.heartbeat();
    }, HEARTBEAT_MS);
    this.heartbeat.unref?.();
  }

  /** How many client streams are open (for the benchmark and logs). */
  get openStreams(): number {
    let n = 0;
    for (const { watchers } of this.watched.values()) n += watchers.size;
    return n;
  }

  /** The id of the article's latest event, read before the article so nothing falls between the two. */
  async latestEventId(externalId: string): Promise<string> {
    const [latest] = (await this.redis.xrevrange(articleEventsKey(this.redis, this.redisPrefix, externalId), "+", "-", "COUNT", 1)) as StreamEntry[];
    return latest?.[0] ?? START_ID;
  }

  /**
   * Where a watch without Last-Event-ID starts: `latestId` as read before `article`, unless the
   * article has ended and its log has left Redis: then the archive's newest id.
   */
  async startingId(externalId: string, latestId: string, article: Article): Promise<string> {
    if (latestId !== START_ID || isRunning(article)) return latestId;
    return (await this.archive.lastId(externalId)) ?? START_ID;
  }

  /**
   * The SSE response of one client. Without `lastEventId` it starts with `article` (read after
   * `latestId`); with it, with the events after that id. An ended article's stream ends after its
   * final event.
   */
  open(start: WatchStart): Response {
    let stop: (() => void) | undefined;
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        const write = (chunk: Uint8Array) => {
          try {
            controller.enqueue(chunk);
          } catch {
            stop?.(); // the client went away
          }
        };
        // Reconnecting clients wait this long before trying again.
        write(encoder.encode("retry: 3000\n\n"));
        stop = this.subscribe(start, {
          event: (id, event, data) => write(frame(id, event, data)),
          heartbeat: () => write(HEARTBEAT),
          close: () => {
            try {
              controller.close();
            } catch {
              // already closed by the client
            }
          },
        });
      },
      cancel: () => stop?.(),
    });
    return new Response(body, {
      headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-store, no-transform", connection: "keep-alive", "x-accel-buffering": "no" },
    });
  }

  /**
   * Sends one client's events to `sink`, as `open` describes; returns what ends the watch early
   * (the client left). The sink is closed either way.
   */
  subscribe(start: WatchStart, given: EventSink): () => void {
    const { externalId, current: article, from } = start;
    let released = false;
    const sink: EventSink = {
      ...given,
      close: () => {
        if (!released) start.release();
        released = true;
        given.close();
      },
    };
    if ("latestId" in from) {
      const { event, data } = currentEvent(article);
      // The record read here can be newer than the gateway's remembered copy: an article that
      // ended while the stream opened is forgotten before its final event goes out, as below.
      if (isFinalEvent(event)) this.onEnded?.(externalId);
      sink.event(from.latestId, event, data);
      if (event !== "state") {
        sink.close();
        return () => {};
      }
    }
    const cursor = "latestId" in from ? from.latestId : from.lastEventId;
    const watcher = new Watcher(articleEventsKey(this.redis, this.redisPrefix, externalId), cursor, {
      ...sink,
      event: (id, event, data) => {
        if (isFinalEvent(event)) this.onEnded?.(externalId);
        sink.event(id, event, data);
      },
      close: () => {
        this.leave(watcher);
        sink.close();
      },
    });
    this.join(watcher, cursor);
    void this.catchUp(watcher, externalId, cursor, "lastEventId" in from ? article : undefined);
    return () => watcher.end();
  }

  /** Stops the loop and the heartbeat and ends every open stream. */
  stop(): void {
    this.stopped = true;
    clearInterval(this.heartbeat);
    for (const { watchers } of [...this.watched.values()]) for (const w of [...watchers]) w.end();
    for (const lane of this.lanes.values()) lane.reader.disconnect();
  }

  private laneOf(key: string): Lane {
    const name = isCluster(this.redis) ? hashTagOf(key) : "";
    let lane = this.lanes.get(name);
    if (!lane) {
      const reader = duplicateConnection(this.redis, { enableAutoPipelining: false, enableOfflineQueue: true, commandTimeout: undefined, blockingTimeout: BLOCK_MS + STALLED_READ_MS, blockingTimeoutGrace: STALLED_READ_MS });
      onRedisError(reader, (error) => this.logger.error("redis error", { error: error.message, connection: "article-events" }));
      this.lanes.set(name, (lane = { reader, keys: new Set(), reading: false }));
    }
    return lane;
  }

  private join(watcher: Watcher, cursor: string): void {
    const entry = this.watched.get(watcher.key);
    if (entry) entry.watchers.add(watcher);
    else this.watched.set(watcher.key, { cursor, watchers: new Set([watcher]) });
    const lane = this.laneOf(watcher.key);
    lane.keys.add(watcher.key);
    if (!lane.reading) void this.read(lane);
  }

  private leave(watcher: Watcher): void {
    const entry = this.watched.get(watcher.key);
    if (!entry) return;
    entry.watchers.delete(watcher);
    if (entry.watchers.size > 0) return;
    this.watched.delete(watcher.key);
    this.laneOf(watcher.key).keys.delete(watcher.key);
  }

  private async catchUp(watcher: Watcher, externalId: string, cursor: string, ended?: Article): Promise<void> {
    try {
      // An ended article's events are in the archive, in Redis (a stream not yet expired, or one
      // begun by a later publication), or some in each: both are read and merged by id.
      const archived = ended !== undefined && !isRunning(ended);
      const [entries, older] = await Promise.all([this.redis.xrange(watcher.key, `(${cursor}`, "+") as Promise<StreamEntry[]>, archived ? this.archive.after(externalId, cursor) : []]);
      watcher.caughtUp(mergedById(older, entries.map(readStreamEntry).filter((e): e is LoggedArticleEvent => e !== undefined)));
      // A reconnect to an article whose log lacks its end (Redis was away when it ended) still gets it.
      if (archived) watcher.endWith(ended);
    } catch (error) {
      this.logger.warn("could not read an article's events", { key: watcher.key, error: (error as Error).message });
      watcher.end();
    }
  }

  private async read(lane: Lane): Promise<void> {
    lane.reading = true;
    try {
      while (!this.stopped && lane.keys.size > 0) {
        const keys = [...lane.keys];
        const cursors = keys.map((k) => this.watched.get(k)!.cursor);
        let reply: [string, StreamEntry[]][] | null;
        try {
          reply = (await lane.reader.xread("COUNT", READ_COUNT, "BLOCK", BLOCK_MS, "STREAMS", ...keys, ...cursors)) as [string, StreamEntry[]][] | null;
        } catch (error) {
          if (this.stopped) break;
          this.logger.warn("reading article events failed; retrying", { error: (error as Error).message });
          await Bun.sleep(RETRY_MS);
          continue;
        }
        for (const [key, entries] of reply ?? []) {
          const entry = this.watched.get(key);
          if (!entry || entries.length === 0) continue;
          entry.cursor = entries[entries.length - 1]![0];
          for (const raw of entries) {
            const event = readStreamEntry(raw);
            if (event) for (const w of [...entry.watchers]) w.deliver(event);
          }
        }
      }
    } finally {
      lane.reading = false;
    }
  }
}
