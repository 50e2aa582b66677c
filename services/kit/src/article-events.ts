// The durable per-article event log behind GET /v1/articles/{id}/events: one Redis Stream per
// article under REDIS_PREFIX while it runs, written by generation-runner (steps, research sources,
// images, states) and article-store (completed, published, failed, publications), read by any
// gateway replica. Capped in length and expiring a week after its last event. Once the article
// has ended, article-store copies the stream to its archive in Postgres (event-archive.ts there)
// and lets the stream expire ENDED_LOG_SECONDS later: Redis holds live work only.
// Also the cancel signal a cancelled article sends to whichever runner works on it.
import { isCluster, redisKey, slotKey, type RedisConnection } from "./redis.ts";
import { LUA_CLOCK, redisScript } from "./redis-scripts.ts";
import { within } from "./deadline.ts";
import { logWritesOf } from "./ordered-log-writes.ts";

/** Events after which an article's stream ends. */
export const FINAL_EVENTS = ["completed", "published", "failed"] as const;
export type ArticleEventName = "state" | "step_started" | "step_finished" | "waiting" | "source" | "image" | "publication" | "version_created" | "retried" | "revision" | (typeof FINAL_EVENTS)[number];

export interface ArticleEvent {
  event: ArticleEventName;
  data: Record<string, unknown>;
}

// Far more than any run writes; a runaway producer cannot grow a stream without bound.
const MAX_EVENTS_PER_ARTICLE = 1000;
const KEEP_SECONDS = 7 * 86_400;
const APPEND_TIMEOUT_MS = 500;
// Entries a retried batch looks back over for itself: more than the writes of the article that
// can come between (one run's writes are ordered behind the batch; article-store adds a few).
const MAX_BATCH_LOOKBACK = 64;

/**
 * Article logs are spread over this many hash tags: on a Redis Cluster a reader watching many
 * articles makes one blocking XREAD per shard (a multi-key command stays within one slot), and
 * the logs still spread over up to this many masters.
 */
export const EVENT_LOG_SHARDS = 16;

/** The shard of an article's log (a stable hash of its external_id). */
export function eventLogShardOf(externalId: string): number {
  let hash = 0;
  for (let i = 0; i < externalId.length; i++) hash = (hash * 31 + externalId.charCodeAt(i)) >>> 0;
  return hash % EVENT_LOG_SHARDS;
}

/**
 * An article's log: on a cluster under its shard's hash tag; one server keeps the name logs always
 * had, so the log of an article under way across an upgrade goes on in the same stream.
 */
export const articleEventsKey = (redis: RedisConnection, redisPrefix: string, externalId: string) =>
  isCluster(redis) ? `${slotKey(redisPrefix, "article-events", `s${eventLogShardOf(externalId)}`)}:${externalId}` : redisKey(redisPrefix, "article-events", externalId);

/** A SCAN pattern matching every article log of the deployment. */
export const articleEventsPattern = (redisPrefix: string) => redisKey(redisPrefix, "article-events", "*");

/** The external_id whose log `key` is (the key's last part). */
export const externalIdOfEventsKey = (key: string) => key.slice(key.lastIndexOf(":") + 1);

/** The channel on which article-store announces a cancelled article (message: its external_id). */
export const articleCancelsChannel = (redisPrefix: string) => redisKey(redisPrefix, "article-cancels");

export const isFinalEvent = (name: string) => (FINAL_EVENTS as readonly string[]).includes(name);

// Appends the events (ARGV from 5 on: name, data, name, data, …) in order and renews the stream's
// expiry. One command whatever the count: a MULTI of the same writes is two commands more and one
// reply per write to read back. The batch's token (ARGV[3]) goes with its first event: a retry
// (ARGV[4] = '1') of a batch whose error came after it landed finds it among the last entries
// and writes nothing again.
const appendEvents = redisScript(`
if ARGV[4] == '1' then
  for _, entry in ipairs(redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', ${MAX_BATCH_LOOKBACK})) do
    local fields = entry[2]
    for i = 1, #fields, 2 do
      if fields[i] == 'batch' and fields[i + 1] == ARGV[3] then return 1 end
    end
  end
end
redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'event', ARGV[5], 'data', ARGV[6], 'batch', ARGV[3])
for i = 7, #ARGV, 2 do
  redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'event', ARGV[i], 'data', ARGV[i + 1])
end
redis.call('EXPIRE', KEYS[1], ARGV[2])
return 0`);

let batches = 0;
// Unique to the batch across processes: this process's random part and a counter.
const PROCESS_TOKEN = crypto.randomUUID().slice(0, 8);
const batchToken = () => `${PROCESS_TOKEN}.${(batches++).toString(36)}`;

/**
 * Appends events in order in one command, with one renewal of the stream's expiry; each event's
 * stream id (milliseconds-sequence) is its SSE event id. `retry` when the same batch (same
 * `token`) may have landed already: it is then not written twice.
 */
export async function appendArticleEvents(
  redis: RedisConnection,
  redisPrefix: string,
  externalId: string,
  events: readonly ArticleEvent[],
  attempt: { token: string; retry: boolean } = { token: batchToken(), retry: false },
): Promise<void> {
  if (events.length === 0) return;
  const fields: string[] = [];
  for (const event of events) fields.push(event.event, JSON.stringify(event.data));
  await appendEvents.run(redis, [articleEventsKey(redis, redisPrefix, externalId)], [MAX_EVENTS_PER_ARTICLE, KEEP_SECONDS, attempt.token, attempt.retry ? "1" : "0", ...fields]);
}

/**
 * For producers whose work must not wait on the log: waits at most APPEND_TIMEOUT_MS, and the
 * write goes on behind it, tried again until it lands (ordered-log-writes.ts), after the
 * article's earlier writes; a write given up is reported to `onError` (the log is for watchers;
 * the article record stays the truth). Events made together go out together: a producer pays one
 * round trip for them, not one each.
 */
export async function tryAppendArticleEvents(redis: RedisConnection, redisPrefix: string, externalId: string, events: readonly ArticleEvent[], onError: (error: Error) => void): Promise<void> {
  const token = batchToken();
  const landed = logWritesOf(redis).enqueue(externalId, (retry) => appendArticleEvents(redis, redisPrefix, externalId, events, { token, retry }), onError);
  await within(landed, APPEND_TIMEOUT_MS).catch(() => undefined);
}

/** An entry as XRANGE/XREAD answer it: [id, [field, value, …]]. */
export type StreamEntry = [id: string, fields: string[]];

export interface LoggedArticleEvent extends ArticleEvent {
  id: string;
}

/** An entry as the stream holds it: its data still the JSON text written. */
export interface RawLoggedEvent {
  id: string;
  event: string;
  data: string;
}

/** An entry's id, event name and data text; undefined when it lacks one of them. */
export function rawStreamEntry([id, fields]: StreamEntry): RawLoggedEvent | undefined {
  const at = (name: string) => {
    const i = fields.indexOf(name);
    return i >= 0 && i % 2 === 0 ? fields[i + 1] : undefined;
  };
  const event = at("event");
  const data = at("data");
  return event && data !== undefined ? { id, event, data } : undefined;
}

/** An event as a watcher gets it, from the stream or the archive alike; undefined when its data is not JSON. */
export function readLoggedEvent({ id, event, data }: RawLoggedEvent): LoggedArticleEvent | undefined {
  try {
    return { id, event: event as ArticleEventName, data: JSON.parse(data) as Record<string, unknown> };
  } catch {
    return undefined;
  }
}

export function readStreamEntry(entry: StreamEntry): LoggedArticleEvent | undefined {
  const raw = rawStreamEntry(entry);
  return raw && readLoggedEvent(raw);
}

const STREAM_ID = /^(\d{1,20})-(\d{1,20})$/;

export const isStreamId = (value: string) => STREAM_ID.test(value);

/** A stream id's milliseconds and sequence number. */
export function streamIdParts(id: string): [ms: bigint, seq: bigint] {
  const [, ms, seq] = STREAM_ID.exec(id)!;
  return [BigInt(ms!), BigInt(seq!)];
}

/** Orders two stream ids (negative when a is earlier). */
export function compareStreamIds(a: string, b: string): number {
  const [am, as] = streamIdParts(a);
  const [bm, bs] = streamIdParts(b);
  const ms = am - bm;
  if (ms !== 0n) return ms < 0n ? -1 : 1;
  const seq = as - bs;
  return seq === 0n ? 0 : seq < 0n ? -1 : 1;
}

/** The failure reason of an article its client cancelled (POST /v1/articles/{id}/cancel). */
export const CANCELLED_REASON = "Cancelled by the client.";

export const isCancelledArticle = (article: { status: string; failureReason?: string | null }) =>
  article.status === "failed" && article.failureReason === CANCELLED_REASON;

/**
 * How long an ended article's stream stays once article-store has archived it: a gateway's read
 * loop (one blocking XREAD a second) and a client catching up when the article ended still find
 * every event in it, and then it goes. Expiring the whole stream rather than trimming it to a
 * tail: a stream's first node is allocated at its full 4 KB, so a stream of one entry costs
 * Redis as much as one of twenty, and only deleting it frees the memory.
 */
export const ENDED_LOG_SECONDS = 10;

/** Where an ended article's archived log ends: its last event's id ("0-0" when none) and name. */
export interface ArchivedLogEnd {
  id: string;
  event: string;
}

// Appends the events an ended article's log receives from article-store (ARGV from 6 on: name,
// data, …): its final event, unless the log already ends with one of that name (ARGV[3]; the
// lifecycle calls that end an article are idempotent, and their repeats must not repeat the end),
// or a later publication. When the stream is gone (archived and expired, or lost with Redis) it
// answers 'absent' unless told where the archive ends (ARGV[4] its last id, ARGV[5] that event's
// name): then the log's end is the archive's, and the new stream's first id follows the
// archive's last, so ids keep growing across the two.
const appendEnding = redisScript(`${LUA_CLOCK}
local last_id, last_event
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)[1]
if last then
  last_id = last[1]
  for i = 1, #last[2], 2 do
    if last[2][i] == 'event' then last_event = last[2][i + 1] end
  end
else
  if ARGV[4] == '' then return 'absent' end
  last_id = ARGV[4]
  last_event = ARGV[5]
end
if ARGV[3] ~= '' and last_event == ARGV[3] then return 'repeated' end
local id = '*'
if not last then
  local ms, seq = string.match(last_id, '^(%d+)-(%d+)$')
  if tonumber(ms) >= clock_ms() then id = ms .. '-' .. (tonumber(seq) + 1) end
end
for i = 6, #ARGV, 2 do
  redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], id, 'event', ARGV[i], 'data', ARGV[i + 1])
  id = '*'
end
redis.call('EXPIRE', KEYS[1], ARGV[2])
return 'appended'`);

/**
 * Appends events to an ended article's log (article-store's writes), in order: `unlessRepeated`
 * skips them when the log already ends with an event of that name. "absent" when the stream is
 * gone and `archivedEnd` was not given: the caller reads where the archive ends and asks again.
 */
export async function appendEndingEvents(
  redis: RedisConnection,
  redisPrefix: string,
  externalId: string,
  events: readonly ArticleEvent[],
  opts: { unlessRepeated?: string; archivedEnd?: ArchivedLogEnd } = {},
): Promise<"appended" | "repeated" | "absent"> {
  const fields: string[] = [];
  for (const event of events) fields.push(event.event, JSON.stringify(event.data));
  const end = opts.archivedEnd;
  return (await appendEnding.run(redis, [articleEventsKey(redis, redisPrefix, externalId)], [MAX_EVENTS_PER_ARTICLE, KEEP_SECONDS, opts.unlessRepeated ?? "", end?.id ?? "", end?.event ?? "", ...fields])) as "appended" | "repeated" | "absent";
}

// Lets an archived stream expire (never later than it would anyway) unless an entry came after
// the last one archived (ARGV[1]): that one is archived by whoever wrote it, or by the sweep.
const expireArchived = redisScript(`
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)[1]
if last and last[1] == ARGV[1] then return redis.call('EXPIRE', KEYS[1], ARGV[2], 'LT') end
return 0`);

/** After the stream's entries up to `lastArchivedId` are in the archive: the stream goes ENDED_LOG_SECONDS later. */
export async function expireArchivedLog(redis: RedisConnection, redisPrefix: string, externalId: string, lastArchivedId: string): Promise<void> {
  await expireArchived.run(redis, [articleEventsKey(redis, redisPrefix, externalId)], [lastArchivedId, ENDED_LOG_SECONDS]);
}
