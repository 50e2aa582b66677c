// Bun's collector lets garbage pile up between its own collections; with a thousand articles in
// flight that garbage alone (request objects, promises, replies already checkpointed) can carry a
// runner past its container's memory limit while its live data is a fraction of it. Past a soft
// limit, a full collection runs, and again only once the process has grown further since.
// A forced collection stops the event loop (up to a second with hundreds of articles in flight),
// so the limit belongs near the container's (RUNNER_MEMORY_MIB), not below the working set.

const CHECK_EVERY_MS = 500;
/** Growth since the last forced collection before another one is worth its pause. */
const REGROWTH_BYTES = 16 * 2 ** 20;

export function collectGarbageAbove(softLimitBytes: number, opts: { rss?: () => number; collect?: () => void; everyMs?: number } = {}): () => void {
  const rss = opts.rss ?? (() => process.memoryUsage.rss());
  const collect = opts.collect ?? (() => Bun.gc(true));
  let afterLast = 0;
  const timer = setInterval(() => {
    const now = rss();
    if (now <= softLimitBytes || now < afterLast + REGROWTH_BYTES) return;
    collect();
    afterLast = rss();
  }, opts.everyMs ?? CHECK_EVERY_MS);
  // Never the reason the process stays up.
  timer.unref();
  return () => clearInterval(timer);
}
