// One article's cost, line by line: the workflow steps (finished or under way), the research, the
// images and the finishing pass. The priced lines are the very checkpoints runCost adds up, so
// the lines always sum to the total the article's cost is set from. Prompts and outputs stay out.
import { asc, eq, sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { articleImages, finishingCheckpoints, researchCheckpoints, runs, stepAttempts, stepCheckpoints } from "../db/schema.ts";
import { parseUsd, sumUsd, type Picodollars } from "../../../kit/src/rules/usd.ts";
import type { CallAccount } from "./call-account.ts";

export interface StepLine extends CallAccount {
  stepNumber: number;
  stepName: string;
  batched: boolean;
  attempts: number;
  startedAt: Date | null;
  finishedAt: Date | null;
}

export interface ResearchLine {
  query: string;
  sources: number;
  cost: Picodollars;
  finishedAt: Date;
}

export interface ImageLine {
  position: number;
  model: string;
  size: string;
  cost: Picodollars;
  finishedAt: Date;
}

export interface FinishingLine extends CallAccount {
  task: string;
  finishedAt: Date;
}

export interface CostBreakdown {
  steps: StepLine[];
  research: ResearchLine | null;
  images: ImageLine[];
  finishing: FinishingLine[];
  total: Picodollars;
}

/** The breakdown of one run; a run not started yet (or an unknown article) has no lines. */
export async function costBreakdownOf(db: Db, externalId: string): Promise<CostBreakdown> {
  const [[run], finished, started, finishing, [research], images] = await Promise.all([
    db.select({ requestedModel: runs.requestedModel }).from(runs).where(eq(runs.externalId, externalId)),
    db.select().from(stepCheckpoints).where(eq(stepCheckpoints.externalId, externalId)),
    db.select().from(stepAttempts).where(eq(stepAttempts.externalId, externalId)),
    db.select().from(finishingCheckpoints).where(eq(finishingCheckpoints.externalId, externalId)).orderBy(asc(finishingCheckpoints.completedAt)),
    // Counted in the database: the sources' extracted text can be large and is not shown.
    db
      .select({ query: researchCheckpoints.query, sources: sql<number>`jsonb_array_length(${researchCheckpoints.sources})::int`, createdAt: researchCheckpoints.createdAt })
      .from(researchCheckpoints)
      .where(eq(researchCheckpoints.externalId, externalId)),
    db
      .select({ position: articleImages.position, model: articleImages.model, size: articleImages.size, createdAt: articleImages.createdAt })
      .from(articleImages)
      .where(eq(articleImages.externalId, externalId))
      .orderBy(asc(articleImages.position)),
  ]);
  const requestedModel = run?.requestedModel ?? "";

  const lines = new Map<number, StepLine>();
  for (const s of started) {
    lines.set(s.stepNumber, {
      stepNumber: s.stepNumber,
      stepName: s.stepName,
      model: requestedModel,
      usedFallback: false,
      batched: false,
      promptTokens: 0,
      completionTokens: 0,
      cost: 0n,
      waitedMs: 0,
      attempts: s.attempts,
      startedAt: s.firstStartedAt,
      finishedAt: null,
    });
  }
  for (const c of finished) {
    const start = lines.get(c.stepNumber);
    lines.set(c.stepNumber, {
      stepNumber: c.stepNumber,
      stepName: c.stepName,
      model: c.model,
      usedFallback: c.usedFallback,
      batched: c.batched,
      promptTokens: c.promptTokens,
      completionTokens: c.completionTokens,
      cost: parseUsd(c.cost),
      waitedMs: c.waitedMs,
      // A step finished before starts were recorded ran at least once.
      attempts: start?.attempts ?? 1,
      startedAt: start?.startedAt ?? null,
      finishedAt: c.completedAt,
    });
  }
  const steps = [...lines.values()].sort((a, b) => a.stepNumber - b.stepNumber);
  const finishingLines = finishing.map((f) => ({
    task: f.task,
    model: f.model,
    // The finishing pass runs the requested model and falls back like a step.
    usedFallback: requestedModel !== "" && f.model !== requestedModel,
    promptTokens: f.promptTokens,
    completionTokens: f.completionTokens,
    cost: parseUsd(f.cost),
    waitedMs: f.waitedMs,
    finishedAt: f.completedAt,
  }));
  // Research is a web search and images are not priced by the catalog: neither adds to the cost.
  const researchLine = research ? { query: research.query, sources: research.sources, cost: 0n, finishedAt: research.createdAt } : null;
  const imageLines = images.map((i) => ({ position: i.position, model: i.model, size: i.size, cost: 0n, finishedAt: i.createdAt }));
  const everyLine = [...steps, ...finishingLines, ...imageLines, ...(researchLine ? [researchLine] : [])];
  return { steps, research: researchLine, images: imageLines, finishing: finishingLines, total: sumUsd(everyLine.map((line) => line.cost)) };
}
