// A bounded memory of recent lookups for half a second. The service promises that revoking or
// expiring a key, disabling a user, ending a subscription or removing a member takes effect
// within one second; remembering an answer for half of that keeps well inside it, while a burst
// of requests from one caller costs one lookup. Concurrent lookups of one id share a call, and a
// failed lookup is forgotten at once so an error is never served from memory.
//
// A memory may also refresh ahead: an answer older than `refreshAfterMs` is still served while
// one lookup in the background replaces it, so under steady traffic no request waits for the
// lookup, and none is served an answer older than the memory's `ttlMs`. A failed refresh forgets
// the answer (the next request looks it up itself and sees the failure).

export const SHORT_MEMORY_MS = 500;
const MAX_ENTRIES = 10_000;

interface Entry<V> {
  /** When its lookup started. */
  at: number;
  expires: number;
  value: Promise<V>;
  settled: boolean;
  /** The lookup replacing it, while one runs. */
  refreshing?: Promise<V>;
}

export class ShortMemory<V> {
  private readonly entries = new Map<string, Entry<V>>();

  constructor(
    private readonly ttlMs = SHORT_MEMORY_MS,
    private readonly maxEntries = MAX_ENTRIES,
    /** Refresh an answer this old in the background while it is still served (never, when unset). */
    private readonly refreshAfterMs?: number,
  ) {}

  /** The remembered answer for `id`, or `lookup()` remembered for ttlMs. */
  get(id: string, lookup: () => Promise<V>): Promise<V> {
    const now = Date.now();
    const cached = this.entries.get(id);
    if (cached && cached.expires > now) {
      if (this.refreshAfterMs !== undefined && cached.settled && !cached.refreshing && now - cached.at >= this.refreshAfterMs) this.refresh(id, cached, lookup);
      return cached.value;
    }
    // Lapsed while its replacement is on the way: that lookup is the answer, not another one.
    if (cached?.refreshing) return cached.refreshing;
    if (this.entries.size >= this.maxEntries) this.evict(now);
    return this.remember(id, now, lookup()).value;
  }

  /** Forgets every answer; lookups under way still answer their callers but are not remembered. */
  clear(): void {
    this.entries.clear();
  }

  private remember(id: string, at: number, lookedUp: Promise<V>): Entry<V> {
    const entry: Entry<V> = { at, expires: at + this.ttlMs, value: lookedUp, settled: false };
    entry.value = lookedUp.then(
      (value) => ((entry.settled = true), value),
      (error) => {
        if (this.entries.get(id) === entry) this.entries.delete(id);
        throw error;
      },
    );
    this.entries.set(id, entry);
    return entry;
  }

  /** Looks `id` up again while `entry` is served; the new answer replaces it once it is in. */
  private refresh(id: string, entry: Entry<V>, lookup: () => Promise<V>): void {
    const at = Date.now();
    entry.refreshing = lookup().then(
      (value) => {
        if (this.entries.get(id) === entry) this.remember(id, at, Promise.resolve(value));
        return value;
      },
      (error) => {
        if (this.entries.get(id) === entry) this.entries.delete(id);
        throw error;
      },
    );
    // Its failure reaches only the requests that wait for it (above).
    entry.refreshing.catch(() => {});
  }

  private evict(now: number): void {
    for (const [id, entry] of this.entries) if (entry.expires <= now) this.entries.delete(id);
    // Still full: drop the oldest half (a Map keeps insertion order).
    let drop = this.entries.size >= this.maxEntries ? Math.floor(this.maxEntries / 2) : 0;
    for (const id of this.entries.keys()) {
      if (drop-- <= 0) break;
      this.entries.delete(id);
    }
  }
}
