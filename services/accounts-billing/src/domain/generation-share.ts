// An account's share of the generation runner's capacity, from the plan of its active
// subscription: its weight in the fair shares between accounts, and the plan's explicit cap on
// its articles in flight, if any.
import { and, eq, gt, isNull, sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { accounts, plans, subscriptions } from "../db/schema.ts";
import { notFound } from "../../../kit/src/errors.ts";
import { preparedPerDatabase } from "../../../kit/src/prepared-statements.ts";

// Asked whenever the runner starts an article (it caches the answer for a few seconds): built once
// (kit/src/prepared-statements.ts), so a call only binds its value. One statement over three
// indexed lookups: the account by its key, its active subscription by subscriptions_one_active,
// the plan by its key. The account row tells an unknown account from one without a plan.
const statements = preparedPerDatabase((db: Db) => ({
  share: db
    .select({ accountId: accounts.id, articlesInFlight: plans.articlesInFlight, shareWeight: plans.shareWeight })
    .from(accounts)
    .leftJoin(subscriptions, and(eq(subscriptions.accountId, accounts.id), isNull(subscriptions.endedAt)))
    .leftJoin(plans, eq(plans.id, subscriptions.planId))
    .where(eq(accounts.id, sql.placeholder("accountId")))
    .limit(1)
    .prepare("generation_share_by_account"),
}));

/** The weight of an account without an active subscription: the default weight of a plan. */
const UNSUBSCRIBED_SHARE_WEIGHT = 1;

/**
 * The plan's articles_in_flight and share_weight for the account. articlesInFlight is null when
 * its plan sets none or it has no active subscription (no cap of its own); shareWeight is 1
 * without an active subscription. NOT_FOUND for an unknown account.
 */
export async function getGenerationShare(db: Db, accountId: number): Promise<{ articlesInFlight: number | null; shareWeight: number }> {
  const [row] = await statements(db).share.execute({ accountId });
  if (!row) throw notFound("No such account.");
  return { articlesInFlight: row.articlesInFlight ?? null, shareWeight: row.shareWeight ?? UNSUBSCRIBED_SHARE_WEIGHT };
}

/**
 * The weights of the accounts with an active subscription, on the plan `planId` (every plan when
 * undefined), a page of `limit` after the subscription `afterSubscription`, in its order.
 */
export async function subscribedShareWeights(db: Db, page: { planId?: number; afterSubscription: number; limit: number }) {
  return db
    .select({ subscription: subscriptions.id, accountId: subscriptions.accountId, shareWeight: plans.shareWeight })
    .from(subscriptions)
    .innerJoin(plans, eq(plans.id, subscriptions.planId))
    .where(and(isNull(subscriptions.endedAt), gt(subscriptions.id, page.afterSubscription), page.planId === undefined ? undefined : eq(subscriptions.planId, page.planId)))
    .orderBy(subscriptions.id)
    .limit(page.limit);
}
