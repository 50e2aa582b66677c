// Erasing an article from the word ledger: its reservation gives back what is still held (a
// delete refunds what is reserved and unsettled) and goes on under a reference that no longer
// names the article, so the month's usage and the words billed stay exact; its origin (project,
// key, cost: the usage report's breakdown) moves with it. One transaction on the locked row; a
// repeat finds the row under its new reference and answers the same.
import { eq, sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { reservationOrigins, wordReservations } from "../db/schema.ts";
import { invalidFields } from "../../../kit/src/errors.ts";

export interface ErasedReservation {
  found: boolean;
  wordsBilled: number;
  wordsReleased: number;
}

export async function eraseReservation(db: Db, reference: string, erasedReference: string): Promise<ErasedReservation> {
  if (reference === "" || erasedReference === "" || erasedReference.includes(reference)) {
    throw invalidFields({ erased_reference: ["erased_reference is required and must not contain reference."] });
  }
  return db.transaction(async (t) => {
    const tx = t as unknown as Db;
    const [held] = await tx.select().from(wordReservations).where(eq(wordReservations.reference, reference)).for("update");
    if (!held) {
      const [erased] = await tx.select().from(wordReservations).where(eq(wordReservations.reference, erasedReference));
      return { found: erased !== undefined, wordsBilled: erased?.state === "settled" ? erased.words : 0, wordsReleased: 0 };
    }
    const releasing = held.state === "reserved";
    await tx
      .update(wordReservations)
      .set({ reference: erasedReference, ...(releasing ? { state: "released" as const } : {}), updatedAt: sql`now()` })
      .where(eq(wordReservations.reference, reference));
    await tx.update(reservationOrigins).set({ reference: erasedReference }).where(eq(reservationOrigins.reference, reference));
    return { found: true, wordsBilled: held.state === "settled" ? held.words : 0, wordsReleased: releasing ? held.words : 0 };
  });
}
