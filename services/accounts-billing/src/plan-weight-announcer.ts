// accounts-billing says an account's weight in the runners' fair turns whenever its plan changes
// (kit/src/plan-weights.ts). A failed announcement (Redis away) is logged, not the operator's
// change refused: the change stands in Postgres, and runners read it at their share's expiry. An
// operator's call waits for Redis a bounded time only.
import type { Db } from "./db/client.ts";
import { getGenerationShare, subscribedShareWeights } from "./domain/generation-share.ts";
import { announcePlanWeights } from "../../kit/src/plan-weights.ts";
import type { RedisConnection } from "../../kit/src/redis.ts";
import type { Logger } from "../../kit/src/logger.ts";
import { within } from "../../kit/src/deadline.ts";

/** Accounts announced by one Redis write. */
const PAGE = 1_000;
/** How long an operator's change waits for its announcement at most. */
const ANNOUNCE_WAIT_MS = 2_000;

export interface PlanWeightAnnouncer {
  /** These accounts' plans changed (created on one, subscribed, unsubscribed). */
  accounts(accountIds: number[]): Promise<void>;
  /** The plan's share_weight changed: every account subscribed to it. */
  plan(planId: number): Promise<void>;
  /** Every subscribed account (at start: the weights of accounts whose plans changed while Redis was away). */
  everyAccount(): Promise<void>;
}

export function planWeightAnnouncer(db: Db, redis: RedisConnection, redisPrefix: string, logger: Logger): PlanWeightAnnouncer {
  const announce = async (what: string, work: () => Promise<void>) => {
    await within(work(), ANNOUNCE_WAIT_MS).catch((error) => logger.warn("could not announce plans' weights", { what, error: (error as Error).message }));
  };
  const subscribed = async (planId?: number) => {
    for (let after = 0; ; ) {
      const rows = await subscribedShareWeights(db, { planId, afterSubscription: after, limit: PAGE });
      await announcePlanWeights(redis, redisPrefix, rows.map((row) => ({ account: String(row.accountId), weight: row.shareWeight })));
      if (rows.length < PAGE) return;
      after = rows[rows.length - 1].subscription;
    }
  };
  return {
    accounts: (accountIds) =>
      announce(`accounts ${accountIds.join(",")}`, async () => {
        const shares = await Promise.all(accountIds.map(async (id) => ({ account: String(id), weight: (await getGenerationShare(db, id)).shareWeight })));
        await announcePlanWeights(redis, redisPrefix, shares);
      }),
    plan: (planId) => announce(`plan ${planId}`, () => subscribed(planId)),
    everyAccount: () => subscribed().catch((error) => logger.warn("could not announce plans' weights", { what: "every account", error: (error as Error).message })),
  };
}
