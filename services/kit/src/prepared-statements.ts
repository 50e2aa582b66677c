// Statements built once per database handle: drizzle turns a query into SQL text on every call
// otherwise (about a quarter of article-store's CPU on its polling reads, about half of the
// runner's CPU for each statement of a step).

/**
 * `build` runs once per handle; its prepared queries then only bind values. They always run on
 * that handle's pool, so they serve statements outside transactions only.
 */
export function preparedPerDatabase<Db extends object, T>(build: (db: Db) => T): (db: Db) => T {
  const built = new WeakMap<Db, T>();
  return (db) => {
    let statements = built.get(db);
    if (!statements) built.set(db, (statements = build(db)));
    return statements;
  };
}
