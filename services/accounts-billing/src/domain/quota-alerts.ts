// quota.low: an account's words taken this month (settled and reserved, as the ledger's remaining
// words count them) reaching 80% and then 95% of its plan's monthly words. Each crossing is one
// row per account, period and threshold (so it fires once a period, whichever replica sees it
// first, and never again when usage drops and climbs back), and the row is its event's outbox:
// handed over to webhook-dispatcher's endpoint-events queue until Redis took it (at least once;
// the event's id makes a repeated hand-over one delivery per endpoint).
import { and, eq, inArray, isNull, sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { quotaAlerts } from "../db/schema.ts";
import type { EndpointEventJob } from "../../../kit/src/queues.ts";
import { currentPeriod } from "./quota-period.ts";

export const QUOTA_ALERT_THRESHOLDS = [80, 95] as const;
const HAND_OVER_BATCH = 500;

export type QuotaAlert = typeof quotaAlerts.$inferSelect;

/**
 * Records the thresholds crossed in the period that have no row yet; the number recorded. Reads
 * the folded usage (word_usage, folded about once a second), so a crossing is seen within a fold.
 */
export async function recordQuotaCrossings(db: Db, period = currentPeriod()): Promise<number> {
  const thresholds = sql.raw(QUOTA_ALERT_THRESHOLDS.map((t) => `(${t})`).join(", "));
  const rows = await db.execute(sql`
    insert into accounts_billing.quota_alerts (account_id, period, threshold_percent, monthly_words, taken_words)
    select u.account_id, u.period, t.pct, p.monthly_words, u.settled_words + u.reserved_words
    from accounts_billing.word_usage u
    join accounts_billing.subscriptions s on s.account_id = u.account_id and s.ended_at is null
    join accounts_billing.plans p on p.id = s.plan_id
    cross join (values ${thresholds}) as t(pct)
    where u.period = ${period} and p.monthly_words > 0 and (u.settled_words + u.reserved_words) * 100 >= p.monthly_words * t.pct
      -- Crossings already recorded are skipped before the insert: most passes find nothing new.
      and not exists (select 1 from accounts_billing.quota_alerts a where a.account_id = u.account_id and a.period = u.period and a.threshold_percent = t.pct)
    on conflict do nothing
    returning account_id`);
  return rows.length;
}

/** The event an alert stands for. */
export function quotaLowEvent(alert: QuotaAlert): EndpointEventJob {
  return {
    eventId: `evt_quota.low_${alert.accountId}_${alert.period}_${alert.thresholdPercent}`,
    type: "quota.low",
    occurredAt: alert.createdAt.toISOString(),
    accountId: alert.accountId,
    data: {
      account_id: alert.accountId,
      period: alert.period,
      threshold_percent: alert.thresholdPercent,
      monthly_words: alert.monthlyWords,
      words_taken: alert.takenWords,
      words_remaining: Math.max(0, alert.monthlyWords - alert.takenWords),
    },
  };
}

/** Hands over the alerts not yet handed over (oldest first); the number handed over. */
export async function handOverQuotaAlerts(db: Db, handOver: (event: EndpointEventJob) => Promise<void>): Promise<number> {
  const waiting = await db.select().from(quotaAlerts).where(isNull(quotaAlerts.handedOverAt)).orderBy(quotaAlerts.createdAt).limit(HAND_OVER_BATCH);
  if (waiting.length === 0) return 0;
  await Promise.all(waiting.map((alert) => handOver(quotaLowEvent(alert))));
  // Marked after Redis took them: a crash in between hands them over again, deduplicated by the event id.
  for (const period of new Set(waiting.map((a) => a.period))) {
    for (const pct of QUOTA_ALERT_THRESHOLDS) {
      const accounts = waiting.filter((a) => a.period === period && a.thresholdPercent === pct).map((a) => a.accountId);
      if (accounts.length === 0) continue;
      await db
        .update(quotaAlerts)
        .set({ handedOverAt: new Date() })
        .where(and(eq(quotaAlerts.period, period), eq(quotaAlerts.thresholdPercent, pct), inArray(quotaAlerts.accountId, accounts)));
    }
  }
  return waiting.length;
}
