// Statements built once per database handle: drizzle turns a query into SQL text on every call
// otherwise, about half of the runner's CPU for each statement of a step (a step's checkpoint
// and its start cost 0.7-0.8 ms of CPU each built anew, 0.25-0.35 ms prepared).
import type { Db } from "./client.ts";

/**
 * `build` runs once per handle; its prepared queries then only bind values. They always run on
 * that handle's pool, so they serve statements outside transactions only.
 */
export function preparedPerDatabase<T>(build: (db: Db) => T): (db: Db) => T {
  const built = new WeakMap<Db, T>();
  return (db) => {
    let statements = built.get(db);
    if (!statements) built.set(db, (statements = build(db)));
    return statements;
  };
}
