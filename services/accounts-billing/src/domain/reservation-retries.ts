// Holding an article's reservation again for a retry: the retried run settles it at the words the
// article has at last, replacing what the failed run settled, so the words of steps the retry does
// not run again are billed once. The allowance check counts the reservation's settled words as
// given back (they are replaced). One transaction on the locked row.
import { eq, sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { wordReservations } from "../db/schema.ts";
import { precondition } from "../../../kit/src/errors.ts";
import { currentPeriod } from "./quota-period.ts";
import { getWordUsage, reserveWords } from "./word-quota.ts";

export async function reserveAgain(db: Db, accountId: number, reference: string, words: number): Promise<{ words: number; previouslySettled: number }> {
  const [existing] = await db.select().from(wordReservations).where(eq(wordReservations.reference, reference));
  if (!existing) {
    const made = await reserveWords(db, accountId, reference, words);
    return { words: made.reservation.words, previouslySettled: 0 };
  }
  if (existing.state === "reserved") return { words: existing.words, previouslySettled: 0 };
  const usage = await getWordUsage(db, accountId);
  const period = currentPeriod(new Date());
  const returned = existing.state === "settled" && existing.period === period ? existing.words : 0;
  if (usage.remainingWords + returned < words) {
    const remaining = usage.remainingWords + returned;
    throw precondition(`The monthly word quota cannot cover this retry: ${remaining} words remaining, ${words} required.`, {
      target_word_count: [`Insufficient monthly word quota: ${remaining} words remaining, ${words} required (120% of target_word_count).`],
    });
  }
  return db.transaction(async (t) => {
    const tx = t as unknown as Db;
    const [row] = await tx.select().from(wordReservations).where(eq(wordReservations.reference, reference)).for("update");
    if (row!.state === "reserved") return { words: row!.words, previouslySettled: 0 };
    await tx.update(wordReservations).set({ state: "reserved", words, period, updatedAt: sql`now()` }).where(eq(wordReservations.reference, reference));
    return { words, previouslySettled: row!.state === "settled" ? row!.words : 0 };
  });
}
