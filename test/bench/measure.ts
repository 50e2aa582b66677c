// Small measuring helpers for the benchmarks: concurrent load with latency percentiles.

export interface LoadResult {
  name: string;
  requests: number;
  seconds: number;
  perSecond: number;
  p50ms: number;
  p99ms: number;
  errors: number;
}

/** Runs `once` from `concurrency` loops for `durationMs`, recording each call's latency. */
export async function load(name: string, once: () => Promise<boolean>, opts: { concurrency: number; durationMs: number }): Promise<LoadResult> {
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  const until = started + opts.durationMs;
  await Promise.all(
    Array.from({ length: opts.concurrency }, async () => {
      while (performance.now() < until) {
        const t = performance.now();
        const ok = await once().catch(() => false);
        latencies.push(performance.now() - t);
        if (!ok) errors++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return { name, requests: latencies.length, seconds, perSecond: latencies.length / seconds, p50ms: at(0.5), p99ms: at(0.99), errors };
}

/** Calls `fn` n times in a tight loop and returns operations per second. */
export function opsPerSecond(n: number, fn: (i: number) => unknown): number {
  const t = performance.now();
  for (let i = 0; i < n; i++) fn(i);
  return n / ((performance.now() - t) / 1000);
}

/**
 * Proportional set size: pages shared between processes (above all the Bun executable's own,
 * about 40 MiB in each) counted once across them, so the sum is what the stack really holds.
 */
export function pssMiB(pid: number): number | null {
  try {
    const rollup = require("node:fs").readFileSync(`/proc/${pid}/smaps_rollup`, "utf8") as string;
    const kb = Number(rollup.match(/^Pss:\s+(\d+)/m)?.[1]);
    return Number.isFinite(kb) ? kb / 1024 : null;
  } catch {
    return null;
  }
}

/** CPU milliseconds a process has used so far (user + system), from /proc; 0 once it is gone. */
export function cpuMs(pid: number): number {
  try {
    const fields = (require("node:fs").readFileSync(`/proc/${pid}/stat`, "utf8") as string).split(") ")[1].split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

/** CPU ms of every process `pgrep` finds with these arguments. */
const pgrepCpuMs = (...args: string[]) =>
  Bun.spawnSync(["pgrep", ...args]).stdout.toString().trim().split("\n").filter(Boolean).map(Number).reduce((sum, pid) => sum + cpuMs(pid), 0);

/** CPU milliseconds of every Postgres backend so far. */
export const postgresCpuMs = () => pgrepCpuMs("-f", "postgres: ");

/** The machine's Redis server (the bench's Redis prefix shares it with anything else using it). */
export const redisCpuMs = () => pgrepCpuMs("-x", "redis-server");

/**
 * CPU milliseconds used since this call by each of the stack's processes, by Postgres's backends
 * and by the Redis server; each reader can be called when its own window ends.
 */
export function cpuCounters(processes: Map<string, { pid: number }>) {
  const started = [...processes].map(([name, p]) => ({ name, pid: p.pid, before: cpuMs(p.pid) }));
  const [postgresBefore, redisBefore] = [postgresCpuMs(), redisCpuMs()];
  return {
    processes: () => started.map((p) => ({ name: p.name, ms: cpuMs(p.pid) - p.before })),
    postgres: () => postgresCpuMs() - postgresBefore,
    redis: () => redisCpuMs() - redisBefore,
  };
}

export function rssMiB(pid: number): number | null {
  try {
    const status = require("node:fs").readFileSync(`/proc/${pid}/status`, "utf8") as string;
    const kb = Number(status.match(/VmRSS:\s+(\d+)/)?.[1]);
    return Number.isFinite(kb) ? kb / 1024 : null;
  } catch {
    return null;
  }
}

export function printTable(rows: Record<string, string | number>[]): void {
  if (!rows.length) return;
  const keys = Object.keys(rows[0]);
  const widths = keys.map((k) => Math.max(k.length, ...rows.map((r) => String(r[k]).length)));
  const line = (values: string[]) => values.map((v, i) => v.padEnd(widths[i])).join("  ");
  console.log(line(keys));
  console.log(line(widths.map((w) => "-".repeat(w))));
  for (const r of rows) console.log(line(keys.map((k) => String(r[k]))));
}

/** One figure of `npm run bench`: what was measured, beside its baseline from the same run. */
export interface Figure {
  /** Short name of the target, e.g. "P1 get". */
  id: string;
  what: string;
  value: number;
  unit: string;
  baseline?: { what: string; value: number };
  /** The goal in words, e.g. "≥ 0.35 × baseline, p99 ≤ 20 ms". */
  goal: string;
  /** Whether the goal was met; null when the figure has no goal. */
  met: boolean | null;
  /** Further readings: percentiles, counts, memory. */
  detail?: Record<string, string | number>;
}

export const ratioOf = (figure: Figure) => (figure.baseline && figure.baseline.value > 0 ? figure.value / figure.baseline.value : undefined);

/** Runs `once` at a fixed rate (open loop) for `durationMs`: latencies include any queueing. */
export async function loadAtRate(name: string, once: () => Promise<boolean>, opts: { perSecond: number; durationMs: number }): Promise<LoadResult> {
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  const total = Math.floor((opts.perSecond * opts.durationMs) / 1000);
  const calls: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / opts.perSecond;
    const wait = due - performance.now();
    if (wait > 1) await Bun.sleep(wait);
    calls.push(
      (async () => {
        const ok = await once().catch(() => false);
        latencies.push(performance.now() - due);
        if (!ok) errors++;
      })(),
    );
  }
  await Promise.all(calls);
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return { name, requests: latencies.length, seconds, perSecond: latencies.length / seconds, p50ms: at(0.5), p99ms: at(0.99), errors };
}
