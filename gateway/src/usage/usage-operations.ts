// The usage report, shared by GET /v1/usage (a key) and the dashboard's usage page (a session):
// the ledger's numbers from accounts-billing (QuotaService.GetUsageReport, the rows the quota
// counts) and the account's rate-limit windows as Redis holds them now.
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { UsageBucket } from "../../../proto/gen/articles/accounts_billing/v1/quota_pb.ts";
import type { Caller, V1Gate } from "../plugins/caller.ts";
import { presentCost } from "../../../services/kit/src/public-article.ts";

/** The rate-limit buckets whose windows the report shows (v1-gate.ts names them per route). */
export const REPORTED_LIMITS = ["articles", "workflows", "usage"] as const;

const iso = (t: Timestamp | undefined) => timestampDate(t!).toISOString();

const bucketJson = (b: UsageBucket) => ({
  start: iso(b.start),
  words: Number(b.settledWords + b.reservedWords),
  settled_words: Number(b.settledWords),
  reserved_words: Number(b.reservedWords),
  cost: presentCost(b.costUsd),
  by_project: b.byProject.map((s) => ({ project_id: s.id ? Number(s.id) : null, words: Number(s.words), cost: presentCost(s.costUsd) })),
  by_key: b.byKey.map((s) => ({ key_id: s.id ? Number(s.id) : null, words: Number(s.words), cost: presentCost(s.costUsd) })),
});

export class UsageOperations {
  constructor(private readonly gate: V1Gate) {}

  async report(caller: Caller) {
    const [report, limits] = await Promise.all([
      this.gate.clients.quota.getUsageReport({ accountId: BigInt(caller.accountId) }),
      Promise.all(
        REPORTED_LIMITS.map(async (bucket) => ({
          bucket,
          windows: (await this.gate.limiter.peek(caller.accountId, bucket, { perMinute: caller.plan.requestsPerMinute, perHour: caller.plan.requestsPerHour, perDay: caller.plan.requestsPerDay })).map((w) => ({
            window_seconds: w.windowSeconds,
            limit: w.limit,
            used: w.used,
            remaining: w.remaining,
          })),
        })),
      ),
    ]);
    const t = report.totals!;
    return {
      account_id: caller.accountId,
      period: t.period,
      monthly_words: Number(t.monthlyWords),
      settled_words: Number(t.usedWords),
      reserved_words: Number(t.reservedWords),
      remaining_words: Number(t.remainingWords),
      days: report.days.map(bucketJson),
      hours: report.hours.map(bucketJson),
      rate_limits: limits,
    };
  }
}
