// The model catalog as last read, for the lookups every article makes: ResolveModel when the
// gateway creates it, then its run's model and fallback. The catalog is a handful of rows that
// operators change rarely, so one read of all of it answers every lookup for half a second
// instead of a query each. Operators' changes made through this process drop it at once; those
// made through another runner are seen within half a second, inside the services' one-second
// promise. A catalog too large to hold is not remembered (its lookups query row by row).

/** How long a read of the catalog answers lookups. */
export const CATALOG_MEMORY_MS = 500;
/** Larger catalogs are not held in memory. */
export const CATALOG_MEMORY_MAX_MODELS = 1000;

/** The catalog in one read: every model by id, and all of them cheapest first (the database's order). */
export interface CatalogView<M extends { id: string }> {
  byId: ReadonlyMap<string, M>;
  cheapestFirst: readonly M[];
}

export class CatalogMemory<M extends { id: string }> {
  private remembered: { view: Promise<CatalogView<M> | undefined>; readAt: number } | undefined;

  constructor(
    /** Every model ordered cheapest first, at most `maxModels + 1` of them. */
    private readonly readAll: (limit: number) => Promise<M[]>,
    private readonly keepMs = CATALOG_MEMORY_MS,
    private readonly maxModels = CATALOG_MEMORY_MAX_MODELS,
    private readonly now = () => performance.now(),
  ) {}

  /** The catalog as read at most `keepMs` ago (lookups at once share one read); undefined: too large to hold. */
  view(): Promise<CatalogView<M> | undefined> {
    const at = this.now();
    // Its age counts from when the read began: nothing answers from a read older than keepMs.
    if (this.remembered && at - this.remembered.readAt < this.keepMs) return this.remembered.view;
    const view = this.readAll(this.maxModels + 1).then((models) =>
      models.length > this.maxModels ? undefined : { byId: new Map(models.map((m) => [m.id, m])), cheapestFirst: models },
    );
    const entry = { view, readAt: at };
    this.remembered = entry;
    // A failed read is not remembered: the next lookup reads again.
    view.catch(() => {
      if (this.remembered === entry) this.remembered = undefined;
    });
    return view;
  }

  /** The catalog changed here: the next lookup reads it again. */
  forget(): void {
    this.remembered = undefined;
  }
}
