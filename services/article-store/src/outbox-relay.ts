// The background loop that turns outbox rows into generation jobs: woken right after each
// creation (passes paced under load, so one relays many creations), and polling meanwhile so
// rows left by a crash (or another replica) still go out.
import type { FairDispatch } from "../../kit/src/fair-dispatch.ts";
import type { GenerationJob } from "../../kit/src/queues.ts";
import type { Logger } from "../../kit/src/logger.ts";
import type { Db } from "./db/client.ts";
import { pruneSentEntries, relayPendingEntries, type OutboxEntry } from "./domain/outbox.ts";
import { purgeExpiredKeys } from "./domain/idempotency.ts";
import { currentTraceparent } from "../../kit/src/tracing.ts";
import { currentRequestId } from "../../kit/src/request-context.ts";
import { within } from "../../kit/src/deadline.ts";

export interface OutboxRelay {
  /**
   * Before a creation commits: the creating call's trace and request id go with its job (noted
   * first, so a pass that finds the row before the wake still sends them).
   */
  note(externalId: string): void;
  /** A noted creation that did not happen (a replay, a refusal): nothing to send with it. */
  forget(externalId: string): void;
  /** Relay now instead of at the next poll. */
  wake(): void;
  stop(): Promise<void>;
}

const PURGE_EVERY_MS = 3_600_000;
const RELAY_BATCH = 100;
const ENQUEUE_TIMEOUT_MS = 10_000;
/**
 * While creations keep coming, a pass starts at most this long after the previous one started,
 * so one pass (a transaction and a Redis round trip) relays all the creations of that interval:
 * under load about one pass per article went out before. A wake after a quiet spell still
 * relays at once; a creation waits for its job at most this much longer.
 */
const MIN_PASS_INTERVAL_MS = 20;

export function startOutboxRelay(opts: { db: Db; dispatch: FairDispatch; logger: Logger; pollMs?: number; minPassIntervalMs?: number }): OutboxRelay {
  const { db, dispatch, logger } = opts;
  const pollMs = opts.pollMs ?? 1000;
  const minPassIntervalMs = opts.minPassIntervalMs ?? MIN_PASS_INTERVAL_MS;
  let stopped = false;
  let wakeUp: (() => void) | undefined;
  // Set by a wake that arrives during a pass, so the row it announces is not left to the poll.
  let woken = false;
  let passStartedAt = -Infinity;
  let lastPurge = 0;
  // The traceparents (while traces are exported) and request ids of creations not relayed yet,
  // which go with their jobs; bounded so rows relayed by another replica cannot make it grow.
  const origins = new Map<string, { trace?: string; requestId?: string }>();

  // Bounded, so an unreachable Redis cannot hold the pass's row locks (or shutdown) open; the
  // rows stay unsent and the next pass sends them again.
  const enqueue = async (entries: OutboxEntry[]) => {
    // Each job waits in its account's line until a runner with a free slot gives the account its turn.
    const lined = entries.map(({ articleId, externalId, accountId }) => ({ externalId, account: String(accountId), order: articleId, data: jobData(externalId) }));
    await within(dispatch.enqueue(lined), ENQUEUE_TIMEOUT_MS, () => new Error(`enqueueing took longer than ${ENQUEUE_TIMEOUT_MS} ms`));
  };

  const jobData = (externalId: string): GenerationJob => {
    const origin = origins.get(externalId);
    if (origin === undefined) return { externalId };
    origins.delete(externalId);
    return { externalId, ...origin };
  };

  const sleep = () =>
    new Promise<void>((resolve) => {
      // A wake starts the next pass once the interval since the last one has passed.
      const paced = () => {
        const wait = passStartedAt + minPassIntervalMs - performance.now();
        if (stopped || wait <= 0) resolve();
        else setTimeout(resolve, wait);
      };
      if (woken) return paced();
      const timer = setTimeout(resolve, pollMs);
      wakeUp = () => {
        wakeUp = undefined;
        clearTimeout(timer);
        paced();
      };
    });

  const loop = (async () => {
    while (!stopped) {
      woken = false;
      passStartedAt = performance.now();
      try {
        // Drain everything pending before waiting again. A pass that took less than a full batch
        // took every row not locked by another replica, so no empty pass follows it: creations
        // this process committed meanwhile woke the relay (woken) and it goes round at once;
        // rows left by a crash or another replica are found at the next poll, as before.
        while (!stopped && (await relayPendingEntries(db, enqueue, RELAY_BATCH)) === RELAY_BATCH);
        if (Date.now() - lastPurge > PURGE_EVERY_MS) {
          lastPurge = Date.now();
          // Hourly upkeep: expired idempotency keys and rows relayed long enough ago.
          await purgeExpiredKeys(db);
          await pruneSentEntries(db);
        }
      } catch (error) {
        // Redis or Postgres is away: the rows stay unsent and the next pass retries them.
        logger.error("outbox relay pass failed", { error });
      }
      if (!stopped) await sleep();
    }
  })();

  return {
    note(externalId) {
      if (origins.size >= 10_000) return;
      const trace = currentTraceparent();
      const requestId = currentRequestId();
      if (trace !== undefined || requestId !== undefined) origins.set(externalId, { ...(trace ? { trace } : {}), ...(requestId ? { requestId } : {}) });
    },
    forget(externalId) {
      origins.delete(externalId);
    },
    wake() {
      woken = true;
      wakeUp?.();
    },
    async stop() {
      stopped = true;
      wakeUp?.();
      await loop;
    },
  };
}
