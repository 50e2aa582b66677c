// Articles changed by hand-written statements: creation and the generation calls each run as one
// statement instead of a transaction of several (docs/performance-history.md, item 17). Their SQL text is fixed,
// so drizzle builds nothing per call and postgres.js prepares the text once per connection; the
// rows it returns are decoded here exactly as drizzle decodes a select of the table.
import { getTableColumns } from "drizzle-orm";
import type { Db } from "./client.ts";
import { articles } from "./schema.ts";

export type ArticleRecord = typeof articles.$inferSelect;

const columns = Object.entries(getTableColumns(articles));

/** One row of article_store.articles (`returning *`) as the record drizzle's select gives. */
export function articleOfRow(row: Record<string, unknown>): ArticleRecord {
  const record: Record<string, unknown> = {};
  for (const [key, column] of columns) {
    const value = row[column.name];
    record[key] = value === null || value === undefined ? null : column.mapFromDriverValue(value);
  }
  return record as ArticleRecord;
}

/**
 * A fixed statement returning article rows, run on the pool or inside a transaction (`db` is then
 * the transaction). Values are bound as given: encode them as the columns would (jsonb as JSON
 * text, arrays as drizzle's array literal) and cast them in the text.
 */
export function articleStatement(text: string): (db: Db, values: unknown[]) => Promise<ArticleRecord[]> {
  return async (db, values) => {
    const rows = await db._.session.prepareQuery({ sql: text, params: values }, undefined, undefined, false).execute();
    return (rows as Record<string, unknown>[]).map(articleOfRow);
  };
}
