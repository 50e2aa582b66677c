// A bounded memory of recent lookups for half a second. The service promises that revoking or
// expiring a key, disabling a user, ending a subscription or removing a member takes effect
// within one second; remembering an answer for half of that keeps well inside it, while a burst
// of requests from one caller costs one lookup. Concurrent lookups of one id share a call, and a
// failed lookup is forgotten at once so an error is never served from memory.

export const SHORT_MEMORY_MS = 500;
const MAX_ENTRIES = 10_000;

interface Entry<V> {
  expires: number;
  value: Promise<V>;
}

export class ShortMemory<V> {
  private readonly entries = new Map<string, Entry<V>>();

  constructor(
    private readonly ttlMs = SHORT_MEMORY_MS,
    private readonly maxEntries = MAX_ENTRIES,
  ) {}

  /** The remembered answer for `id`, or `lookup()` remembered for ttlMs. */
  get(id: string, lookup: () => Promise<V>): Promise<V> {
    const now = Date.now();
    const cached = this.entries.get(id);
    if (cached && cached.expires > now) return cached.value;
    const value = lookup().catch((error) => {
      if (this.entries.get(id)?.value === value) this.entries.delete(id);
      throw error;
    });
    if (this.entries.size >= this.maxEntries) this.evict(now);
    this.entries.set(id, { expires: now + this.ttlMs, value });
    return value;
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
