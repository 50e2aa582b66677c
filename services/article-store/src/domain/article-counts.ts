// The per-project article counts: triggers on articles record each change in the writing
// transaction (migration 0003); folding moves recorded changes into the counts.
import { sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";

/** Changes folded in one transaction at most. */
export const FOLD_BATCH = 10_000;

/** Folds about FOLD_BATCH recorded changes, the oldest; the number folded (0 while another replica folds). */
export async function foldCountChanges(db: Db): Promise<number> {
  const [{ folded }] = await db.execute<{ folded: number }>(sql`select article_store.fold_article_count_changes(${FOLD_BATCH}) as folded`);
  return Number(folded);
}
