// CostBreakdownService handlers: the run's cost lines as the contract carries them.
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import type { CostBreakdownService } from "../../../proto/gen/articles/generation_runner/v1/cost_breakdown_pb.ts";
import type { Db } from "./db/client.ts";
import { costBreakdownOf } from "./domain/cost-breakdown.ts";
import { formatUsd } from "../../kit/src/rules/usd.ts";

const at = (date: Date | null) => (date ? timestampFromDate(date) : undefined);

export const costBreakdownHandlers = (db: Db): ServiceImpl<typeof CostBreakdownService> => ({
  async getCostBreakdown(req) {
    const b = await costBreakdownOf(db, req.externalId);
    return {
      steps: b.steps.map((s) => ({ ...s, cost: formatUsd(s.cost), startedAt: at(s.startedAt), finishedAt: at(s.finishedAt) })),
      research: b.research ? { ...b.research, cost: formatUsd(b.research.cost), finishedAt: at(b.research.finishedAt) } : undefined,
      images: b.images.map((i) => ({ ...i, cost: formatUsd(i.cost), finishedAt: at(i.finishedAt) })),
      finishing: b.finishing.map((f) => ({ ...f, cost: formatUsd(f.cost), finishedAt: at(f.finishedAt) })),
      totalCost: formatUsd(b.total),
    };
  },
});
