// The durable per-article event log behind GET /v1/articles/{id}/events: one Redis Stream per
// article under REDIS_PREFIX, written by generation-runner (steps, research sources, images,
// states) and article-store (completed, published, failed), read by any gateway replica. Capped
// in length and expiring a week after its last event, so finished articles cost nothing for long.
// Also the cancel signal a cancelled article sends to whichever runner works on it.
import type IORedis from "ioredis";
import { redisKey } from "./redis.ts";
import { redisScript } from "./redis-scripts.ts";

/** Events after which an article's stream ends. */
export const FINAL_EVENTS = ["completed", "published", "failed"] as const;
export type ArticleEventName = "state" | "step_started" | "step_finished" | "waiting" | "source" | "image" | "publication" | (typeof FINAL_EVENTS)[number];

export interface ArticleEvent {
  event: ArticleEventName;
  data: Record<string, unknown>;
}

// Far more than any run writes; a runaway producer cannot grow a stream without bound.
const MAX_EVENTS_PER_ARTICLE = 1000;
const KEEP_SECONDS = 7 * 86_400;
const APPEND_TIMEOUT_MS = 500;

export const articleEventsKey = (redisPrefix: string, externalId: string) => redisKey(redisPrefix, "article-events", externalId);

/** The channel on which article-store announces a cancelled article (message: its external_id). */
export const articleCancelsChannel = (redisPrefix: string) => redisKey(redisPrefix, "article-cancels");

export const isFinalEvent = (name: string) => (FINAL_EVENTS as readonly string[]).includes(name);

// Appends the events (ARGV from 3 on: name, data, name, data, …) in order and renews the stream's
// expiry. One command whatever the count: a MULTI of the same writes is two commands more and one
// reply per write to read back.
const appendEvents = redisScript(`
for i = 3, #ARGV, 2 do
  redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'event', ARGV[i], 'data', ARGV[i + 1])
end
redis.call('EXPIRE', KEYS[1], ARGV[2])
return 0`);

/** Appends events in order in one command, with one renewal of the stream's expiry; each event's stream id (milliseconds-sequence) is its SSE event id. */
export async function appendArticleEvents(redis: IORedis, redisPrefix: string, externalId: string, events: readonly ArticleEvent[]): Promise<void> {
  if (events.length === 0) return;
  const fields: string[] = [];
  for (const event of events) fields.push(event.event, JSON.stringify(event.data));
  await appendEvents.run(redis, [articleEventsKey(redisPrefix, externalId)], [MAX_EVENTS_PER_ARTICLE, KEEP_SECONDS, ...fields]);
}

/**
 * For producers whose work must not wait on the log: bounded, and a failure is reported to
 * `onError` rather than thrown (the log is for watchers; the article record stays the truth).
 * Events made together go out together: a producer pays one round trip for them, not one each.
 */
export async function tryAppendArticleEvents(redis: IORedis, redisPrefix: string, externalId: string, events: readonly ArticleEvent[], onError: (error: Error) => void): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error("timed out")), APPEND_TIMEOUT_MS)));
  await Promise.race([appendArticleEvents(redis, redisPrefix, externalId, events), timeout])
    .then(() => undefined, (error) => onError(error as Error))
    .finally(() => clearTimeout(timer));
}

/** An entry as XRANGE/XREAD answer it: [id, [field, value, …]]. */
export type StreamEntry = [id: string, fields: string[]];

export interface LoggedArticleEvent extends ArticleEvent {
  id: string;
}

export function readStreamEntry([id, fields]: StreamEntry): LoggedArticleEvent | undefined {
  const at = (name: string) => {
    const i = fields.indexOf(name);
    return i >= 0 && i % 2 === 0 ? fields[i + 1] : undefined;
  };
  const event = at("event");
  const data = at("data");
  if (!event || data === undefined) return undefined;
  try {
    return { id, event: event as ArticleEventName, data: JSON.parse(data) as Record<string, unknown> };
  } catch {
    return undefined;
  }
}

const STREAM_ID = /^(\d{1,20})-(\d{1,20})$/;

export const isStreamId = (value: string) => STREAM_ID.test(value);

/** Orders two stream ids (negative when a is earlier). */
export function compareStreamIds(a: string, b: string): number {
  const [, am, as] = STREAM_ID.exec(a)!;
  const [, bm, bs] = STREAM_ID.exec(b)!;
  const ms = BigInt(am!) - BigInt(bm!);
  if (ms !== 0n) return ms < 0n ? -1 : 1;
  const seq = BigInt(as!) - BigInt(bs!);
  return seq === 0n ? 0 : seq < 0n ? -1 : 1;
}

/** The failure reason of an article its client cancelled (POST /v1/articles/{id}/cancel). */
export const CANCELLED_REASON = "Cancelled by the client.";

export const isCancelledArticle = (article: { status: string; failureReason?: string | null }) =>
  article.status === "failed" && article.failureReason === CANCELLED_REASON;

// Appends a final event unless the stream's last event already is one of the same name: the
// lifecycle calls that end an article are idempotent, and their repeats must not repeat the end.
const appendUnlessRepeated = redisScript(`
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
if last[1] then
  local f = last[1][2]
  for i = 1, #f, 2 do
    if f[i] == 'event' and f[i + 1] == ARGV[1] then return false end
  end
end
local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[3], '*', 'event', ARGV[1], 'data', ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[4])
return id`);

export async function appendFinalArticleEvent(redis: IORedis, redisPrefix: string, externalId: string, event: ArticleEvent): Promise<void> {
  await appendUnlessRepeated.run(redis, [articleEventsKey(redisPrefix, externalId)], [event.event, JSON.stringify(event.data), MAX_EVENTS_PER_ARTICLE, KEEP_SECONDS]);
}
