// The model catalog as last read, for the lookups every article makes: ResolveModel when the
// gateway creates it, then its run's model and fallback. The catalog is a handful of rows that
// operators change rarely, so one read of all of it answers every lookup instead of a query each,
// for half a second at most. Operators' changes made through this process drop it at once; those
// made through another runner are seen within half a second. A catalog too large to hold is not
// remembered (its lookups query row by row).
//
// Under load the read waits for one of the pool's connections behind the runs' own writes, and
// every lookup waiting for it (each run starting, each creation's ResolveModel) stood still with
// it. So the next read begins once the last is a quarter of a second old, while the last still
// answers: the lookups wait only for a read that takes longer than that.

import { CATALOG_ANSWER_AGE_MAX_MS } from "../../../kit/src/model-catalog-changes.ts";

/** How old a read is when the next one begins (the last answering meanwhile). */
export const CATALOG_REFRESH_AFTER_MS = 250;
/** How long a read answers at most (gateways count on this bound after a change they hear of). */
export const CATALOG_MEMORY_MS = CATALOG_ANSWER_AGE_MAX_MS;
/** Larger catalogs are not held in memory. */
export const CATALOG_MEMORY_MAX_MODELS = 1000;

/** The catalog in one read: every model by id, and all of them cheapest first (the database's order). */
export interface CatalogView<M extends { id: string }> {
  byId: ReadonlyMap<string, M>;
  cheapestFirst: readonly M[];
}

interface Read<M extends { id: string }> {
  view: Promise<CatalogView<M> | undefined>;
  /** When the read began: its age counts from then. */
  readAt: number;
}

export class CatalogMemory<M extends { id: string }> {
  /** The last read that came in. */
  private last: Read<M> | undefined;
  /** The read under way, if any. */
  private next: Read<M> | undefined;

  constructor(
    /** Every model ordered cheapest first, at most `maxModels + 1` of them. */
    private readonly readAll: (limit: number) => Promise<M[]>,
    private readonly keepMs = CATALOG_MEMORY_MS,
    private readonly maxModels = CATALOG_MEMORY_MAX_MODELS,
    private readonly now = () => performance.now(),
    private readonly refreshAfterMs = CATALOG_REFRESH_AFTER_MS,
  ) {}

  /**
   * The catalog as read at most `keepMs` ago (the next read begun once it is `refreshAfterMs`
   * old); lookups at once share one read; undefined: too large to hold.
   */
  view(): Promise<CatalogView<M> | undefined> {
    const at = this.now();
    const last = this.last;
    if (last && at - last.readAt < this.refreshAfterMs) return last.view;
    const next = this.next ?? this.read(at);
    return last && at - last.readAt < this.keepMs ? last.view : next.view;
  }

  /** The catalog changed here: the next lookup reads it again. */
  forget(): void {
    this.last = undefined;
    this.next = undefined;
  }

  private read(at: number): Read<M> {
    const view = this.readAll(this.maxModels + 1).then((models) =>
      models.length > this.maxModels ? undefined : { byId: new Map(models.map((m) => [m.id, m])), cheapestFirst: models },
    );
    const read = { view, readAt: at };
    this.next = read;
    // A read that came in answers from now on; a failed one is not remembered (the next lookup
    // reads again, and the last read answers meanwhile while it may).
    view.then(
      () => {
        if (this.next !== read) return;
        this.next = undefined;
        this.last = read;
      },
      () => {
        if (this.next === read) this.next = undefined;
      },
    );
    return read;
  }
}
