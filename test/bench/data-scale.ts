// P6: the cost of a request does not grow with the data behind it. One project is filled straight
// into the database to 1,000 articles, and its account's word ledger to 1,000 settled reservations
// in the current month; GET by id, list pages 1 and 10,000 (with and without ?status=, by page
// number and, where the page exists, by cursor) and POST (creation reserves words against the
// month's usage) are timed through the API, then the project grows to 1,000,000 articles and the
// ledger to 1,000,000 reservations (BENCH_SCALE_ROWS) and they are timed again against the 1,000
// figures. GET by id and POST are timed at 1,000 once more after
// the project and the month shrink back, their baselines the mean of the two.
import { stackCredential } from "../harness/service-clients.ts";
import { OperatorService } from "../../proto/gen/articles/accounts_billing/v1/operator_pb.ts";
import { currentPeriod } from "../../services/accounts-billing/src/domain/quota-period.ts";
import { WORD_USAGE_FOLD_BATCH } from "../../services/accounts-billing/src/domain/word-quota.ts";
import { serviceClient } from "../../services/kit/src/clients.ts";
import type { BenchContext } from "./context.ts";
import { cpuCounters, load, loadAtRate, type Figure, type LoadResult } from "./measure.ts";
import { waitForArticles } from "./workflows.ts";

const SMALL = 1_000;
const LARGE = Number(process.env.BENCH_SCALE_ROWS ?? 1_000_000);
/** Low, so the figures are each request's own cost rather than queueing behind others. */
const CONCURRENCY = 4;
/** Creations are paced too, each timed on its own; a few hundred at each size. */
const CREATES_PER_SECOND = 50;
const PER_PAGE = 20;
const DEEP_PAGE = 10_000;
/** Rows per INSERT: each statement's trigger sums its rows once; smaller keeps its spill small. */
const SEED_BATCH = 50_000;
/** Articles picked at random for GET by id, read in turn. */
const GET_SAMPLE = 1_000;
/**
 * GET by id is paced so an article comes round again only after 4 s: past the gateway's one-second
 * memory, so every read reaches article-store and Postgres (closed loops would mostly hit memory).
 */
const GETS_PER_SECOND = 250;
/** Long enough for the paced reads to reach every sampled article once. */
const WARM_UP_MS = Math.ceil((GET_SAMPLE / GETS_PER_SECOND) * 1000);

/**
 * A timing of `ctx.seconds`, after a first pass of WARM_UP_MS (reading every sampled article once)
 * that warms every process (compiled code, prepared statements, connections) and Postgres's buffers
 * up, so every size is timed warm: a steady service has what it is polled for in memory, at any size.
 */
async function timedWarm<T>(ctx: BenchContext, timing: (ms: number) => Promise<T>): Promise<T> {
  await timing(WARM_UP_MS);
  return timing(ctx.seconds * 1000);
}
/** Seeded articles are 30 s apart, so a million span about a year (≈ 2,900 a day). */
const SPACING_SECONDS = 30;

const SETTINGS = {
  workflowId: 1, workflowRevision: 1, builtinWorkflow: true, model: "simulator:sim-fast", targetAudience: "Home baristas", brandVoiceId: null,
  includeKeyTakeaways: true, includeFaq: true, headingCapitalization: null, researchEnabled: false, researchMaxSources: 5,
  researchMinContentWords: 100, researchMaxWordsPerSource: 1000, researchIncludeDomains: [], researchExcludeDomains: ["pinterest.com", "quora.com", "reddit.com", "facebook.com"],
  useBatchApi: false, additionalInstruction: null, imageCount: 0, imageAspectRatio: null, imagePresetId: null, reservedWords: 1200,
};

/**
 * Articles number `from`..`to` of the project, oldest first: 70% completed, 10% published, then
 * failed, queued, writing and polishing; finished ones carry a body of about 200 words.
 */
async function seed(ctx: BenchContext, projectId: number, from: number, to: number, first: Date): Promise<void> {
  for (let start = from; start <= to; start += SEED_BATCH) {
    const end = Math.min(to, start + SEED_BATCH - 1);
    await ctx.sql`
      insert into article_store.articles (external_id, account_id, project_id, title, description, content, original_content, status,
        article_type, target_keyword, keywords, target_word_count, actual_word_count, tone, point_of_view, language, country_targeting,
        ai_model_used, cost, current_step, ai_detection_score, originality_checked_at, settings, created_at, updated_at)
      select gen_random_uuid(), ${ctx.accountId}, ${projectId}, 'Brewing guide ' || g, case when done then 'How to brew, part ' || g end,
        case when done then body end, case when done then body end, status,
        'blog_post', 'coffee ' || (g % 500), array['coffee', 'brewing', 'guide ' || (g % 50)], 1000, case when done then 200 else 0 end,
        'friendly', 'second_person', 'en', 'US', case when status <> 'queued' then 'simulator:sim-fast' end,
        case when done then 0.0042 else 0 end, case when status in ('writing', 'polishing') then 'Draft' end,
        case when done then (g % 100)::int end, case when done then created + interval '2 minutes' end, ${ctx.sql.json(SETTINGS)},
        created, created + interval '2 minutes'
      from generate_series(${start}::int8, ${end}::int8) as g,
        lateral (select case when g % 20 < 14 then 'completed' when g % 20 < 16 then 'published' when g % 20 = 16 then 'failed'
                             when g % 20 = 17 then 'queued' when g % 20 = 18 then 'writing' else 'polishing' end as status) as s,
        lateral (select s.status in ('completed', 'published') as done, repeat(md5(g::text) || ' brewing notes ', 13) as body,
                        ${first}::timestamptz + g * ${SPACING_SECONDS} * interval '1 second' as created) as article`;
  }
  await ctx.sql`vacuum analyze article_store.articles, article_store.article_counts, article_store.article_day_counts`;
  await checkpoint(ctx);
}

/**
 * Settled reservations `from`..`to` of the account in the current month, as that many articles
 * created and generated this month would have left, folded into the month's usage as the service's
 * folder would have long before (the folder running in accounts-billing folds along).
 */
async function seedReservations(ctx: BenchContext, from: number, to: number): Promise<void> {
  for (let start = from; start <= to; start += SEED_BATCH) {
    const end = Math.min(to, start + SEED_BATCH - 1);
    await ctx.sql`
      insert into accounts_billing.word_reservations (reference, account_id, period, words, state)
      select 'seeded-' || g, ${ctx.accountId}, ${currentPeriod()}, 1000, 'settled' from generate_series(${start}::int8, ${end}::int8) as g`;
  }
  await foldWordUsage(ctx);
}

/**
 * Writes the dirty pages of a seeding or a rewrite now rather than in a checkpoint during the
 * timings; a role without the right to (not a superuser, no pg_checkpoint) times them without it.
 */
async function checkpoint(ctx: BenchContext): Promise<void> {
  await ctx.sql`checkpoint`.catch(() => {});
}

/** Folds every recorded word usage change, as the service's folder would, and tidies the tables. */
async function foldWordUsage(ctx: BenchContext): Promise<void> {
  while ((await ctx.sql`select accounts_billing.fold_word_usage_changes(${WORD_USAGE_FOLD_BATCH}) as folded, exists (select from accounts_billing.word_usage_changes) as more`)[0].more) await Bun.sleep(10);
  await ctx.sql`vacuum analyze accounts_billing.word_reservations, accounts_billing.word_usage, accounts_billing.word_usage_changes`;
}

/**
 * The project back to its first `keep` articles and the month to its first `keep` seeded
 * reservations: the grown ones deleted and the tables rewritten, so their indexes are a
 * thousand rows' again, as before they grew.
 */
async function shrink(ctx: BenchContext, projectId: number, keep: number): Promise<void> {
  const [{ last }] = await ctx.sql`select id as last from article_store.articles where project_id = ${projectId} order by id offset ${keep - 1} limit 1`;
  await ctx.sql`delete from article_store.articles where project_id = ${projectId} and id > ${last}`;
  await ctx.sql`delete from accounts_billing.word_reservations where account_id = ${ctx.accountId} and reference like 'seeded-%' and substr(reference, 8)::int8 > ${keep}`;
  await foldWordUsage(ctx);
  await ctx.sql`vacuum full analyze article_store.articles, accounts_billing.word_reservations`;
  await checkpoint(ctx);
}

/**
 * CPU of each of the stack's processes, Postgres and Redis while `work` runs, per request it
 * made: where a slower GET went (work by the clock included, so a busy background shows).
 */
async function cpuPerRequest(ctx: BenchContext, work: () => Promise<LoadResult>): Promise<{ result: LoadResult; cpu: string }> {
  const counters = cpuCounters(ctx.stack.processes);
  const result = await work();
  const per = (ms: number) => (ms / Math.max(1, result.requests)).toFixed(2);
  const cpu = [...counters.processes().map((p) => `${p.name} ${per(p.ms)}`), `postgres ${per(counters.postgres())}`, `redis ${per(counters.redis())}`].join(", ");
  return { result, cpu };
}

interface Readings {
  get: LoadResult;
  create: LoadResult;
  /** CPU ms per GET by process. */
  getCpu: string;
  /** The cursor reads only where the deep page exists (not at 1,000 articles). */
  lists: Record<ListName, LoadResult | undefined>;
  deepPage: number;
}

type ListName = "page 1" | "deep page" | "status page 1" | "status deep page" | "cursor deep page" | "status cursor deep page";

/** The articles GET by id reads at the project's present size: the same ones in the warm-up and the timings. */
async function sampleIds(ctx: BenchContext, projectId: number): Promise<string[]> {
  return (await ctx.sql`select id from article_store.articles where project_id = ${projectId} order by random() limit ${GET_SAMPLE}`).map((r) => String(r.id));
}

/** Where creations go: a project of the same account beside the one grown, with a one-step workflow. */
interface Creations {
  projectId: number;
  articleType: string;
}

/** GET by id of `ids` in turn for `ms`, paced, with the CPU each process spent per GET. */
async function measureGet(ctx: BenchContext, articles: number, ids: string[], ms: number): Promise<{ result: LoadResult; cpu: string }> {
  let next = 0;
  return cpuPerRequest(ctx, () =>
    loadAtRate(`GET /v1/articles/{id} at ${articles}`, async () => (await ctx.api.get(`/v1/articles/${ids[next++ % ids.length]}`)).status === 200, { perSecond: GETS_PER_SECOND, durationMs: ms }),
  );
}

/**
 * POST paced for `ms`, every created article then followed to completed. They go to another
 * project of the account, so the project read keeps its size; the account's month grows by them.
 */
async function measureCreate(ctx: BenchContext, creations: Creations, articles: number, ms: number): Promise<LoadResult> {
  let title = 0;
  const created: number[] = [];
  const create = await loadAtRate(
    `POST /v1/articles at ${articles}`,
    async () => {
      const res = await ctx.api.post("/v1/articles", { project_id: creations.projectId, title: `Created at scale ${title++}`, article_type: creations.articleType, target_word_count: 100, tone: "friendly", point_of_view: "second_person", language: "en" });
      if (res.status === 201) created.push(res.body.data.id);
      return res.status === 201;
    },
    { perSecond: CREATES_PER_SECOND, durationMs: ms },
  );
  await waitForArticles(ctx, created, "completed");
  return create;
}

/** The meta.next_cursor of the page before `page`: the cursor that reads `page`. */
async function cursorTo(ctx: BenchContext, projectId: number, filter: string, page: number): Promise<string> {
  const res = await ctx.api.get(`/v1/articles?project_id=${projectId}&per_page=${PER_PAGE}&${filter}page=${page - 1}`);
  if (res.status !== 200 || !res.body.meta.next_cursor) throw new Error(`P6 cursor to page ${page}: ${res.status} ${JSON.stringify(res.body.meta)}`);
  return encodeURIComponent(res.body.meta.next_cursor);
}

/** p50 and p99 of GET by id (of `ids` in turn), the six lists and POST at the project's present size, each for `ms`. */
async function measureAt(ctx: BenchContext, projectId: number, creations: Creations, articles: number, ids: string[], ms: number): Promise<Readings> {
  const { result: get, cpu: getCpu } = await measureGet(ctx, articles, ids, ms);

  const [{ completed }] = await ctx.sql`select count(*)::int as completed from article_store.articles where project_id = ${projectId} and status = 'completed'`;
  // At 1,000 articles page 10,000 is past the end; a quick run's smaller project stops earlier too.
  const deepPage = articles === SMALL ? DEEP_PAGE : Math.min(DEEP_PAGE, Math.floor(completed / PER_PAGE));
  const entries = (total: number, page: number) => Math.max(0, Math.min(PER_PAGE, total - (page - 1) * PER_PAGE));
  // A read counts only when it answers the page's full number of entries.
  const list = (query: string, expected: number) =>
    load(
      `GET /v1/articles?${query} at ${articles}`,
      async () => {
        const res = await ctx.api.get(`/v1/articles?project_id=${projectId}&per_page=${PER_PAGE}&${query}`);
        return res.status === 200 && res.body.data.length === expected;
      },
      { concurrency: CONCURRENCY, durationMs: ms },
    );
  // By cursor only where the page before the deep one exists to give it.
  const byCursor = async (filter: string, total: number) =>
    total > (deepPage - 1) * PER_PAGE ? list(`${filter}cursor=${await cursorTo(ctx, projectId, filter, deepPage)}`, entries(total, deepPage)) : undefined;
  const lists: Record<ListName, LoadResult | undefined> = {
    "page 1": await list("page=1", entries(articles, 1)),
    "deep page": await list(`page=${deepPage}`, entries(articles, deepPage)),
    "status page 1": await list("status=completed&page=1", entries(completed, 1)),
    "status deep page": await list(`status=completed&page=${deepPage}`, entries(completed, deepPage)),
    // The same deep pages by cursor (keyset): the cursor the page before gives, read over and over.
    "cursor deep page": await byCursor("", articles),
    "status cursor deep page": await byCursor("status=completed&", completed),
  };
  // Creation last, its articles generated before the next timing, so their generation does not
  // share the cores with the reads.
  const create = await measureCreate(ctx, creations, articles, ms);
  return { get, getCpu, create, lists, deepPage };
}

const percentiles = (r: LoadResult, prefix: string) => ({ [`${prefix}p50 ms`]: r.p50ms, [`${prefix}p99 ms`]: r.p99ms, [`${prefix}errors`]: r.errors });

export async function measureDataScale(ctx: BenchContext): Promise<Figure[]> {
  const operator = serviceClient(OperatorService, { baseUrl: ctx.stack.env.ACCOUNTS_BILLING_URL, credential: stackCredential(ctx.stack, "operator") });
  const { project } = await operator.createProject({ accountId: BigInt(ctx.accountId), name: "Data scale" });
  const projectId = Number(project!.id);
  const creationsProject = Number((await operator.createProject({ accountId: BigInt(ctx.accountId), name: "Data scale creations" })).project!.id);
  const step = { article_type: "bench_scale", step_number: 1, step_name: "Write", system: "You write articles.", user: "[[sim:words=100]] Write about {title}.", output_format: "markdown" };
  const workflow = await ctx.api.post(`/v1/projects/${creationsProject}/workflows`, step);
  if (workflow.status !== 201) throw new Error(`P6 workflow: ${workflow.status} ${JSON.stringify(workflow.body)}`);
  const creations: Creations = { projectId: creationsProject, articleType: step.article_type };
  // The newest seeded article is about now.
  const first = new Date(Date.now() - LARGE * SPACING_SECONDS * 1000);

  let started = performance.now();
  await seed(ctx, projectId, 1, SMALL, first);
  await seedReservations(ctx, 1, SMALL);
  const smallSeedSeconds = (performance.now() - started) / 1000;
  const smallIds = await sampleIds(ctx, projectId);
  const small = await timedWarm(ctx, (ms) => measureAt(ctx, projectId, creations, SMALL, smallIds, ms));

  started = performance.now();
  await seed(ctx, projectId, SMALL + 1, LARGE, first);
  await seedReservations(ctx, SMALL + 1, LARGE);
  const largeSeedSeconds = (performance.now() - started) / 1000;
  const largeIds = await sampleIds(ctx, projectId);
  const large = await timedWarm(ctx, (ms) => measureAt(ctx, projectId, creations, LARGE, largeIds, ms));
  const seeding = { "seed s": largeSeedSeconds, "rows seeded": LARGE - SMALL, [`seed s to ${SMALL}`]: smallSeedSeconds };

  // GET by id and POST at a thousand once more, after the project and the month are shrunk back:
  // their baselines are the mean of the readings on both sides of the million, so the machine
  // drifting over the minutes between (by 10-30% on this kind of machine) is not taken for growth
  // with the data, nor hides it. (The lists' goals leave room for that drift.)
  await shrink(ctx, projectId, SMALL);
  const { result: getAgain, cpu: getAgainCpu } = await timedWarm(ctx, (ms) => measureGet(ctx, SMALL, smallIds, ms));
  const createAgain = await timedWarm(ctx, (ms) => measureCreate(ctx, creations, SMALL, ms));
  const getBaseline = (small.get.p50ms + getAgain.p50ms) / 2;
  const createBaseline = (small.create.p50ms + createAgain.p50ms) / 2;

  const label = LARGE.toLocaleString("en-US");
  const figures: Figure[] = [
    {
      id: "P6 get",
      what: `GET /v1/articles/{id} p50 with ${label} articles in the project, ${GETS_PER_SECOND}/s over ${GET_SAMPLE} articles in turn`,
      value: large.get.p50ms,
      unit: "ms",
      baseline: { what: `the same with ${SMALL.toLocaleString("en-US")} articles, before the project grew and after it shrank (mean)`, value: getBaseline },
      goal: "≤ 1.1 × baseline",
      met: large.get.p50ms <= 1.1 * getBaseline && large.get.errors === 0 && getAgain.errors === 0,
      detail: {
        ...percentiles(large.get, ""), ...percentiles(small.get, "before "), ...percentiles(getAgain, "after "), ...seeding,
        "CPU ms per GET": large.getCpu, "CPU ms per GET before": small.getCpu, "CPU ms per GET after": getAgainCpu,
      },
    },
    {
      id: "P6 create",
      what: `POST /v1/articles p50 with ${label} articles in the account and ${label} reservations in its month, ${CREATES_PER_SECOND}/s`,
      value: large.create.p50ms,
      unit: "ms",
      baseline: { what: `the same with ${SMALL.toLocaleString("en-US")} of each, before they grew and after they shrank (mean)`, value: createBaseline },
      // A creation writes into indexes a thousand times larger, a level or two deeper: a small
      // constant step, not the growth with the data this figure is about. (When every reservation
      // summed the month's, creations at a million queued behind each other's sums until they
      // timed out: p50 5 s, 485 of 500 failed.)
      goal: "≤ 1.25 × baseline",
      met: large.create.p50ms <= 1.25 * createBaseline && large.create.errors === 0 && createAgain.errors === 0,
      detail: { ...percentiles(large.create, ""), ...percentiles(small.create, "before "), ...percentiles(createAgain, "after "), created: large.create.requests },
    },
  ];
  const lists: [ListName, string, ListName][] = [
    ["page 1", "page 1", "page 1"],
    ["deep page", `page ${large.deepPage.toLocaleString("en-US")}`, "page 1"],
    ["status page 1", "?status=completed page 1", "status page 1"],
    ["status deep page", `?status=completed page ${large.deepPage.toLocaleString("en-US")}`, "status page 1"],
  ];
  for (const [name, what, baselineName] of lists) {
    const measured = large.lists[name]!;
    const baseline = small.lists[baselineName]!;
    figures.push({
      id: `P6 list ${name}`,
      what: `GET /v1/articles ${what} (per_page ${PER_PAGE}) p50 with ${label} articles, ${CONCURRENCY} concurrent`,
      value: measured.p50ms,
      unit: "ms",
      baseline: { what: `${baselineName} with ${SMALL.toLocaleString("en-US")} articles`, value: baseline.p50ms },
      goal: "≤ 2 × baseline",
      met: measured.p50ms <= 2 * baseline.p50ms && measured.errors === 0,
      detail: { ...percentiles(measured, ""), ...percentiles(baseline, "baseline "), [`at ${SMALL} p50 ms`]: small.lists[name]!.p50ms },
    });
  }
  // A cursor reads any depth in the time of page 1: each deep cursor read beside page 1 of the
  // same project, at the same size, in the same run.
  const cursors: [ListName, string, ListName][] = [
    ["cursor deep page", "cursor to page", "page 1"],
    ["status cursor deep page", "?status=completed cursor to page", "status page 1"],
  ];
  for (const [name, what, baselineName] of cursors) {
    const measured = large.lists[name]!;
    const baseline = large.lists[baselineName]!;
    figures.push({
      id: `P6 list ${name}`,
      what: `GET /v1/articles ${what} ${large.deepPage.toLocaleString("en-US")} (per_page ${PER_PAGE}) p50 with ${label} articles, ${CONCURRENCY} concurrent`,
      value: measured.p50ms,
      unit: "ms",
      baseline: { what: `${baselineName} of the same ${label} articles`, value: baseline.p50ms },
      goal: "≤ 1.25 × baseline",
      met: measured.p50ms <= 1.25 * baseline.p50ms && measured.errors === 0,
      detail: { ...percentiles(measured, ""), ...percentiles(baseline, "baseline "), "by page number p50 ms": large.lists[name.replace("cursor ", "") as ListName]!.p50ms },
    });
  }
  return figures;
}
