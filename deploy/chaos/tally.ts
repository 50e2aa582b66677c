// The figures of a chaos run and its verdict. Articles, step checkpoints and word reservations are
// read straight from the run's private database: it is this run's own, and the figures must not
// depend on the services under test reporting on themselves. The word ledger is also asked of
// accounts-billing, as a client's usage page would show it.
import type { Sql } from "postgres";
import type { AdminClients } from "../admin/clients.ts";
import type { Creation } from "./articles.ts";
import type { FaultRecord } from "./faults.ts";
import type { WebhookInbox } from "./webhook-inbox.ts";
import { isRunningStatus } from "../../services/kit/src/rules/article-statuses.ts";


/** How many of the project's articles are in each status. */
export async function statusCounts(sql: Sql, projectId: number): Promise<Map<string, number>> {
  const rows = await sql<{ status: string; n: number }[]>`select status, count(*)::int as n from article_store.articles where project_id = ${projectId} group by status`;
  return new Map(rows.map((r) => [r.status, r.n]));
}

interface ArticleRow {
  external_id: string;
  status: string;
  words: number;
  /** The article's cost equals the sum of its checkpoints' costs (what each step billed). */
  cost_matches: boolean;
  steps: number;
  /** Checkpoint rows beyond one per step: a step recorded, and billed, more than once. */
  extra_checkpoints: number;
  pickups: number | null;
  settled_words: number | null;
  reservation: string | null;
}

async function articleRows(sql: Sql, projectId: number): Promise<ArticleRow[]> {
  return sql<ArticleRow[]>`
    with steps as (
      select external_id, count(distinct step_number)::int as steps, (count(*) - count(distinct step_number))::int as extra, sum(cost) as cost
      from generation_runner.step_checkpoints group by external_id
    ), finishing as (
      select external_id, sum(cost) as cost from generation_runner.finishing_checkpoints group by external_id
    )
    select a.external_id::text, a.status, a.actual_word_count as words,
           a.cost = coalesce(s.cost, 0) + coalesce(f.cost, 0) as cost_matches,
           coalesce(s.steps, 0) as steps, coalesce(s.extra, 0) as extra_checkpoints,
           r.pickups, w.words::int as settled_words, w.state as reservation
    from article_store.articles a
    left join steps s on s.external_id = a.external_id::text
    left join finishing f on f.external_id = a.external_id::text
    left join generation_runner.runs r on r.external_id = a.external_id::text
    left join accounts_billing.word_reservations w on w.reference = a.external_id::text
    where a.project_id = ${projectId}`;
}

/** Model calls per article step, from the simulator's count of the prompts it served. */
async function modelCallsPerStep(simulatorUrl: string, tag: string): Promise<Map<string, number>> {
  const res = await fetch(`${simulatorUrl}/_sim/calls?contains=${encodeURIComponent(tag)}`);
  const { calls } = (await res.json()) as { calls: { prompt: string; count: number }[] };
  const perStep = new Map<string, number>();
  for (const { prompt, count } of calls) {
    const match = /^chaos-\w+ step (\d+): [^"]*"([^"]*)"/.exec(prompt.replace(/\[\[sim:[^\]]*\]\]/g, ""));
    if (!match) continue;
    const key = `${match[2]} step ${match[1]}`;
    perStep.set(key, (perStep.get(key) ?? 0) + count);
  }
  return perStep;
}

export interface TallyInput {
  sql: Sql;
  admin: AdminClients;
  accountId: bigint;
  projectId: number;
  simulatorUrl: string;
  promptTag: string;
  requested: number;
  creations: Creation[];
  inbox: WebhookInbox;
  faults: FaultRecord;
  seconds: number;
}

export interface Tally {
  lines: string[];
  /** Why the run failed; empty when it passed. */
  problems: string[];
}

const count = <T>(items: T[], test: (item: T) => boolean) => items.filter(test).length;
const fmt = (n: number) => n.toLocaleString("en-US");

export async function tally(input: TallyInput): Promise<Tally> {
  const { creations, inbox, faults } = input;
  const rows = await articleRows(input.sql, input.projectId);
  const created = count(creations, (c) => c.externalId !== undefined);
  const refused = creations.filter((c) => c.refusal);
  const done = rows.filter((r) => r.status === "completed" || r.status === "published");
  const failed = count(rows, (r) => r.status === "failed");
  const stuck = rows.filter((r) => isRunningStatus(r.status));
  const unpublished = count(done, (r) => r.status === "completed");

  const ours = new Set(rows.map((r) => r.external_id));
  const missing = count(done, (r) => !inbox.deliveries.has(r.external_id));
  const repeated = count([...inbox.deliveries], ([id, n]) => ours.has(id) && n > 1);
  const stray = count([...inbox.deliveries.keys()], (id) => !ours.has(id));

  const steps = rows.reduce((n, r) => n + r.steps, 0);
  const billedTwice = rows.reduce((n, r) => n + r.extra_checkpoints, 0);
  const costDiffers = count(done, (r) => !r.cost_matches);
  const pickedUpAgain = count(rows, (r) => (r.pickups ?? 0) > 1);
  const calls = await modelCallsPerStep(input.simulatorUrl, input.promptTag).catch(() => undefined);
  const rerun = calls ? [...calls.values()].filter((n) => n > 1) : [];

  const generated = done.reduce((n, r) => n + r.words, 0);
  const settledWrong = count(done, (r) => r.reservation !== "settled" || r.settled_words !== r.words);
  const usage = await input.admin.quota.getWordUsage({ accountId: input.accountId }).catch((error: Error) => error);
  const used = usage instanceof Error ? undefined : Number(usage.usedWords);
  const reserved = usage instanceof Error ? undefined : Number(usage.reservedWords);

  const kills = [...faults.kills].map(([name, n]) => `${name} ${n}`).join(", ") || "none";
  const ledger =
    used === undefined
      ? `unavailable (${(usage as Error).message})`
      : `${fmt(used)} words used, ${fmt(reserved!)} still reserved; ${fmt(generated)} words generated: ${used === generated ? "balanced" : `OFF BY ${fmt(used - generated)}`}`;
  const stuckBy = [...new Set(stuck.map((r) => r.status))].map((s) => `${count(stuck, (r) => r.status === s)} ${s}`).join(", ");
  const row = (label: string, value: string) => `${label.padEnd(28)}${value}`;
  const lines = [
    row("articles created", `${fmt(created)} of ${fmt(input.requested)}${refused.length ? ` (${refused.length} refused, e.g. ${refused[0]!.refusal})` : ""}; creation requests retried: ${fmt(creations.reduce((n, c) => n + c.retries, 0))}`),
    row("completed or published", `${fmt(done.length)} (published ${fmt(done.length - unpublished)})`),
    row("failed", fmt(failed)),
    row("stuck (not terminal)", `${fmt(stuck.length)}${stuck.length ? ` (${stuckBy})` : ""}`),
    row("steps checkpointed", fmt(steps)),
    row("steps billed twice", `${fmt(billedTwice)}; articles whose cost differs from their checkpoints: ${fmt(costDiffers)}`),
    row("steps called again", `${calls ? fmt(rerun.length) : "unknown (simulator unreachable)"} (before their checkpoint, after a kill or an outage: allowed); articles picked up more than once: ${fmt(pickedUpAgain)}`),
    row("webhooks delivered", `${fmt(count(done, (r) => inbox.deliveries.has(r.external_id)))} of ${fmt(done.length)}; missing ${fmt(missing)}; bad signatures ${fmt(inbox.badSignatures)}${stray ? `; for unknown articles ${stray}` : ""}`),
    row("webhooks delivered twice+", `${fmt(repeated)} (at-least-once delivery allows it)`),
    row("word ledger", `${ledger}; articles settled other than their words: ${fmt(settledWrong)}`),
    row("faults", `kills: ${kills}; Postgres restarted: ${faults.postgresRestarted ? "once" : "no"}; Redis restarted empty: ${faults.redisRestarted ? "once" : "no"}`),
    row("died without being killed", `${faults.selfExits.length ? faults.selfExits.join(", ") : "none"}${faults.failedRestarts.length ? `; restarts not ready: ${faults.failedRestarts.length}` : ""}`),
    row("duration", `${input.seconds.toFixed(0)} s`),
  ];

  const problems: string[] = [];
  const problem = (when: boolean, what: string) => when && problems.push(what);
  problem(created < input.requested, `${input.requested - created} articles were never created`);
  problem(stuck.length > 0, `${stuck.length} articles stuck`);
  problem(failed > 0, `${failed} articles failed`);
  problem(missing > 0, `${missing} webhooks never delivered`);
  problem(inbox.badSignatures > 0, `${inbox.badSignatures} webhooks with a bad signature`);
  problem(billedTwice > 0 || costDiffers > 0, "a step billed twice");
  problem(used === undefined, "the word ledger could not be read");
  problem(used !== undefined && (used !== generated || reserved !== 0 || settledWrong > 0), "the word ledger does not match the words generated");
  problem(faults.selfExits.length > 0, `processes died on their own: ${faults.selfExits.join(", ")}`);
  problem(faults.failedRestarts.length > 0, `${faults.failedRestarts.length} restarts did not come up ready`);
  problem(!faults.postgresRestarted || !faults.redisRestarted, "Postgres or Redis was not restarted (the run ended first)");
  return { lines, problems };
}
