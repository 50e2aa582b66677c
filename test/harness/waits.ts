// Waits for what the product promises within a stated time: unlike eventually (a patience for a
// slow machine), the bound here is the promise itself, so it is never stretched.

/**
 * Probes until `check` holds (and returns that value); fails unless it holds by `boundMs` after
 * `from`. The last probe starts at or after the bound, so a product that keeps its promise only
 * just is not failed for the probe's own latency, and one that misses it is never let through.
 */
export async function withinPromise<T>(boundMs: number, probe: () => Promise<T>, check: (value: T) => boolean, what: string, from = Date.now()): Promise<T> {
  const deadline = from + boundMs;
  for (;;) {
    const startedAt = Date.now();
    const value = await probe();
    if (check(value)) return value;
    if (startedAt >= deadline) {
      throw new Error(`${what} did not happen within the promised ${boundMs} ms; last value: ${JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? String(v) : v))}`);
    }
    await Bun.sleep(Math.max(0, Math.min(50, deadline - Date.now())));
  }
}
