// `npm run bench:length`: how close articles land to their target_word_count when the model writes
// as real models do. The stack `npm start` runs (free ports, its own database and Redis prefix)
// generates 48 articles on the simulator's model sim-real (real-model-writing.ts: 55-70% of a long
// request, at most 1,400-1,500 words a call, +20-30% on a short one, one call in five cut
// mid-sentence): 4 built-in types × 6 targets × 2 languages, all created at once, each with a
// target keyword and one more keyword, half of them humanized. Words are the
// article's actual_word_count, the words settled against the quota. It prints each article and:
// the share within ±10% of its target, the worst deviation, the articles whose text ends
// mid-sentence, the share of the brief checks measured that passed (each article's `quality`), and
// the checks failed by name, the share of tokens and cost spent beyond the workflow's own steps
// (the cost breakdown's finishing lines other than the humanization pass itself), and of it the
// brief repairs' ("repair N: …" lines, those after the pass included), and for each article
// outside ±10% the finishing calls it got. Then the same 48 on a stack whose articles get no
// repair calls (QUALITY_REPAIR_CALLS=0), to show what the repairs bought.
import { ModelCatalogService } from "../../proto/gen/articles/generation_runner/v1/models_pb.ts";
import { serviceClient } from "../../services/kit/src/clients.ts";
import { stackCredential } from "../harness/service-clients.ts";
import { openBenchStack, type BenchContext } from "./context.ts";
import { printTable } from "./measure.ts";
import { createBenchArticle } from "./workflows.ts";
import { endsMidSentence } from "../../services/generation-runner/src/domain/length-control.ts";

const MODEL = "simulator:sim-real";
const TYPES = ["blog_post", "listicle", "tutorial", "ultimate_guide"];
const TARGETS = [300, 800, 1_500, 3_000, 6_000, 10_000];
const LANGUAGES = ["en", "de"];
const TOPICS: Record<string, string> = {
  blog_post: "Home Espresso on a Budget",
  listicle: "Houseplants That Survive Low Light",
  tutorial: "Setting Up a Home Backup Routine",
  ultimate_guide: "Winter Camping",
};
// A keyword of each topic the brief asks for besides its target keyword.
const KEYWORDS: Record<string, string> = {
  blog_post: "grind size",
  listicle: "indirect light",
  tutorial: "offsite copy",
  ultimate_guide: "sleeping bag",
};
// Half the articles ask for the humanize pass, which rewrites the whole text after the first round
// of length control and repairs: what is settled is its version.
const HUMANIZED = new Set([800, 3_000, 10_000]);
const WITHIN = 0.1;

interface Measured {
  type: string;
  target: number;
  language: string;
  status: string;
  words: number;
  endsMidSentence: boolean;
  deviation: number;
  tokens: number;
  extraTokens: number;
  cost: number;
  extraCost: number;
  repairTokens: number;
  repairCost: number;
  checksPassed: number;
  checksFailed: number;
  failedChecks: string[];
  /** The finishing calls made, in order (printed for an article outside ±10%). */
  tasks: string[];
}

interface StepsBody {
  steps: { prompt_tokens: number; completion_tokens: number; cost: string }[];
  finishing: { task: string; prompt_tokens: number; completion_tokens: number; cost: string }[];
}

async function waitUntilFinished(ctx: BenchContext, ids: number[], timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const [{ open }] = await ctx.sql<{ open: number }[]>`select count(*)::int as open from article_store.articles where id in ${ctx.sql(ids)} and status not in ('completed', 'published', 'failed')`;
    if (open === 0) return;
    if (performance.now() > deadline) throw new Error(`${open} of ${ids.length} articles still generating after ${timeoutMs / 1000} s`);
    await Bun.sleep(250);
  }
}

async function measureArticle(ctx: BenchContext, id: number, type: string, target: number, language: string): Promise<Measured> {
  const article = (await ctx.api.get(`/v1/articles/${id}`)).body.data;
  const breakdown = (await ctx.api.get(`/v1/articles/${id}/steps`)).body.data as StepsBody;
  const tokensOf = (line: { prompt_tokens: number; completion_tokens: number }) => line.prompt_tokens + line.completion_tokens;
  const extra = breakdown.finishing.filter((line) => line.task !== "humanize");
  // "repair 1: …", and those made after the humanize pass ("after humanize: repair 1: …").
  const repairs = breakdown.finishing.filter((line) => /(^|: )repair \d+: /.test(line.task));
  const checks: { name: string; status: string }[] = article.quality?.checks ?? [];
  const sum = <T>(lines: T[], of: (line: T) => number) => lines.reduce((total, line) => total + of(line), 0);
  const words = Number(article.actual_word_count ?? 0);
  return {
    type,
    target,
    language,
    status: article.status,
    words,
    endsMidSentence: endsMidSentence(String(article.content ?? "")),
    deviation: (words - target) / target,
    tokens: sum([...breakdown.steps, ...breakdown.finishing], tokensOf),
    extraTokens: sum(extra, tokensOf),
    cost: sum([...breakdown.steps, ...breakdown.finishing], (line) => Number(line.cost)),
    extraCost: sum(extra, (line) => Number(line.cost)),
    repairTokens: sum(repairs, tokensOf),
    repairCost: sum(repairs, (line) => Number(line.cost)),
    checksPassed: checks.filter((c) => c.status === "passed").length,
    checksFailed: checks.filter((c) => c.status === "failed").length,
    failedChecks: checks.filter((c) => c.status === "failed").map((c) => c.name),
    tasks: breakdown.finishing.map((line) => line.task),
  };
}

const percent = (share: number) => `${(share * 100).toFixed(1)}%`;

interface Run {
  measured: Measured[];
  seconds: number;
}

/** The 48 articles generated on a stack of their own whose articles get `repairCalls` repair calls each. */
async function generateAll(repairCalls: number): Promise<Run> {
  const bench = await openBenchStack({ seconds: 0, env: { QUALITY_REPAIR_CALLS: String(repairCalls) } });
  try {
    const ctx = await bench.tenant();
    const catalog = serviceClient(ModelCatalogService, { baseUrl: ctx.stack.env.GENERATION_RUNNER_URL, credential: stackCredential(ctx.stack, "operator") });
    await catalog.addModel({ model: { id: MODEL, active: true, inputPricePerMillion: "0.15", outputPricePerMillion: "0.60" } });
    const planned = TYPES.flatMap((type) => TARGETS.flatMap((target) => LANGUAGES.map((language) => ({ type, target, language }))));
    const startedAt = performance.now();
    const created = await Promise.all(
      planned.map(async (p) => ({
        ...p,
        id: (await createBenchArticle(ctx, p.type, TOPICS[p.type]!, {
          target_word_count: p.target,
          language: p.language,
          target_keyword: TOPICS[p.type]!.toLowerCase(),
          keywords: [KEYWORDS[p.type]!],
          humanize: HUMANIZED.has(p.target),
          model: MODEL,
        })).id,
      })),
    );
    await waitUntilFinished(ctx, created.map((c) => c.id), 30 * 60_000);
    const seconds = (performance.now() - startedAt) / 1000;
    return { measured: await Promise.all(created.map((c) => measureArticle(ctx, c.id, c.type, c.target, c.language))), seconds };
  } finally {
    await bench.close();
  }
}

function summarize(label: string, { measured, seconds }: Run): void {
  const completed = measured.filter((m) => m.status === "completed" || m.status === "published");
  const within = completed.filter((m) => Math.abs(m.deviation) <= WITHIN).length;
  const worst = measured.reduce((w, m) => (Math.abs(m.deviation) > Math.abs(w.deviation) ? m : w));
  const total = (of: (m: Measured) => number) => measured.reduce((sum, m) => sum + of(m), 0);
  const passed = total((m) => m.checksPassed);
  const failed = total((m) => m.checksFailed);
  const failures = new Map<string, number>();
  for (const name of measured.flatMap((m) => m.failedChecks)) failures.set(name, (failures.get(name) ?? 0) + 1);
  console.log();
  console.log(`${label}: ${measured.length} articles (${completed.length} completed) on ${MODEL} in ${seconds.toFixed(0)} s`);
  console.log(`within ±10% of target: ${within} of ${measured.length} (${percent(within / measured.length)})`);
  console.log(`worst deviation: ${worst.deviation >= 0 ? "+" : ""}${percent(worst.deviation)} (${worst.type}, ${worst.target} words, ${worst.language}: ${worst.words} words)`);
  for (const m of measured.filter((m) => Math.abs(m.deviation) > WITHIN)) console.log(`  outside: ${m.type}, ${m.target} words, ${m.language}: ${m.words} words after ${m.tasks.join(" | ") || "no finishing call"}`);
  console.log(`ending mid-sentence: ${measured.filter((m) => m.endsMidSentence).length} of ${measured.length}`);
  console.log(`brief checks passed: ${passed} of ${passed + failed} measured (${percent(passed / Math.max(1, passed + failed))})`);
  console.log(`checks failed, by name: ${[...failures].sort((a, b) => b[1] - a[1]).map(([name, n]) => `${name} ${n}`).join(", ") || "none"}`);
  console.log(`extra calls' share: ${percent(total((m) => m.extraTokens) / total((m) => m.tokens))} of tokens, ${percent(total((m) => m.extraCost) / total((m) => m.cost))} of cost`);
  console.log(`of which brief repairs: ${percent(total((m) => m.repairTokens) / total((m) => m.tokens))} of tokens, ${percent(total((m) => m.repairCost) / total((m) => m.cost))} of cost`);
}

// Repairs as configured by default (QUALITY_REPAIR_CALLS=3), then none: what the repairs bought.
const withRepairs = await generateAll(3);
printTable(
  withRepairs.measured.map((m) => ({
    type: m.type,
    target: String(m.target),
    language: m.language,
    status: m.status,
    words: String(m.words),
    deviation: `${m.deviation >= 0 ? "+" : ""}${percent(m.deviation)}`,
    "cut sentence": m.endsMidSentence ? "yes" : "",
    "extra tokens": percent(m.tokens ? m.extraTokens / m.tokens : 0),
    "checks passed": `${m.checksPassed}/${m.checksPassed + m.checksFailed}`,
    "failed checks": m.failedChecks.join(" "),
  })),
);
const withoutRepairs = await generateAll(0);
summarize("with brief repairs (QUALITY_REPAIR_CALLS=3)", withRepairs);
summarize("without brief repairs (QUALITY_REPAIR_CALLS=0)", withoutRepairs);
