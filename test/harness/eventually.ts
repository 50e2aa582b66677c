// Polling for what a test waits on: an effect of another process that lands a little later.

/** Probes until `check` holds on what the probe returns (and returns it), or fails naming `what` and the last value. */
export async function eventually<T>(probe: () => Promise<T>, check: (value: T) => boolean, timeoutMs = 10_000, what = "the condition"): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T = await probe();
  while (!check(last)) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last value: ${JSON.stringify(last, (_k, v) => (typeof v === "bigint" ? String(v) : v))}`);
    await Bun.sleep(50);
    last = await probe();
  }
  return last;
}
