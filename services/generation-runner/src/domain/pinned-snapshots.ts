// The runner's memory of pinned workflow snapshots. A snapshot names one revision of a workflow,
// and a revision's steps never change (a later change makes a new revision), so articles pinned
// to the same revision share one fetch from workflow-catalog. Bounded in count, and each entry
// is forgotten after a while so a workflow deleted meanwhile is noticed within that time.

export const SNAPSHOT_MEMORY_MS = 60_000;
const MAX_SNAPSHOTS = 500;

export interface PinnedRevision {
  workflowId: bigint;
  revision: number;
  articleType: string;
}

export class PinnedSnapshotMemory<T> {
  private readonly entries = new Map<string, { value: Promise<T>; until: number }>();

  constructor(
    private readonly fetch: (pin: PinnedRevision) => Promise<T>,
    private readonly keepMs = SNAPSHOT_MEMORY_MS,
    private readonly capacity = MAX_SNAPSHOTS,
  ) {}

  /** The revision's snapshot; concurrent first requests share one fetch, and a failed fetch is not remembered. */
  get(pin: PinnedRevision): Promise<T> {
    const key = `${pin.workflowId}:${pin.revision}:${pin.articleType}`;
    const now = Date.now();
    const known = this.entries.get(key);
    if (known && known.until > now) {
      // Most recently used last, so the oldest entry is the first the bound drops.
      this.entries.delete(key);
      this.entries.set(key, known);
      return known.value;
    }
    const value = this.fetch(pin);
    const entry = { value, until: now + this.keepMs };
    this.entries.delete(key);
    this.entries.set(key, entry);
    value.catch(() => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    });
    while (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
    return value;
  }
}
