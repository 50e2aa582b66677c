// A Bun process keeps what a burst of work grew it by: JSC collects garbage when the program
// allocates, and an idle process allocates next to nothing, so the burst's garbage (and the pages
// it sits on) stays resident until the next burst, which then grows from there. Once the process
// has been quiet for a few seconds and has grown since the last collection, one full collection
// runs, and the allocator hands the freed pages back. Under steady load it never runs.

const CHECK_EVERY_MS = 1000;
/** Share of a core under which the process counts as quiet. */
const QUIET_CPU_SHARE = 0.02;
/** Quiet checks in a row before collecting. */
const QUIET_CHECKS = 2;
/** Growth since the last collection (or start) before a collection is worth it. */
const GROWTH_BYTES = 16 * 2 ** 20;

export interface QuietCollectionProbes {
  rss: () => number;
  /** CPU time used so far, in milliseconds. */
  cpuMs: () => number;
  collect: () => void;
  everyMs: number;
}

const processProbes: QuietCollectionProbes = {
  rss: () => process.memoryUsage.rss(),
  cpuMs: () => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  },
  collect: () => Bun.gc(true),
  everyMs: CHECK_EVERY_MS,
};

/** Starts watching; returns the function that stops it. */
export function collectGarbageWhenQuiet(probes: Partial<QuietCollectionProbes> = {}): () => void {
  const { rss, cpuMs, collect, everyMs } = { ...processProbes, ...probes };
  let afterLast = rss();
  let lastCpu = cpuMs();
  let quietChecks = 0;
  const timer = setInterval(() => {
    const cpu = cpuMs();
    quietChecks = cpu - lastCpu < everyMs * QUIET_CPU_SHARE ? quietChecks + 1 : 0;
    const now = rss();
    if (quietChecks >= QUIET_CHECKS && now >= afterLast + GROWTH_BYTES) {
      collect();
      afterLast = rss();
      quietChecks = 0;
    }
    // The collection's own CPU time is not counted as work.
    lastCpu = cpuMs();
  }, everyMs);
  // Never the reason the process stays up.
  timer.unref();
  return () => clearInterval(timer);
}
