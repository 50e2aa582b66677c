// The usage report as QuotaService.GetUsageReport answers it.
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { GetUsageReportResponseSchema } from "../../../proto/gen/articles/accounts_billing/v1/quota_pb.ts";
import type { UsageBucket, UsageReport, UsageShare } from "./domain/usage-report.ts";
import { formatUsd } from "../../kit/src/rules/usd.ts";

const shares = (list: UsageShare[]) => list.map((s) => ({ id: BigInt(s.id), words: BigInt(s.words), costUsd: formatUsd(s.cost) }));

const bucketMessage = (b: UsageBucket) => ({
  start: timestampFromDate(b.start),
  settledWords: BigInt(b.settledWords),
  reservedWords: BigInt(b.reservedWords),
  byProject: shares(b.byProject),
  byKey: shares(b.byKey),
  costUsd: formatUsd(b.cost),
});

export function usageReportMessage(r: UsageReport): MessageInitShape<typeof GetUsageReportResponseSchema> {
  const t = r.totals;
  return {
    totals: { period: t.period, monthlyWords: BigInt(t.monthlyWords), usedWords: BigInt(t.usedWords), reservedWords: BigInt(t.reservedWords), remainingWords: BigInt(t.remainingWords) },
    days: r.days.map(bucketMessage),
    hours: r.hours.map(bucketMessage),
  };
}
