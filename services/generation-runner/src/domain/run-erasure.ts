// Erasing what the runner keeps of an article (DELETE /v1/articles/{id}): the stored image files
// first (their rows say where they are), then every row of the article in one transaction. Safe to
// repeat: an image already gone from its store, or rows already deleted, change nothing.
import { eq } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { articleImages, finishingCheckpoints, researchCheckpoints, runs, stepAttempts, stepCheckpoints } from "../db/schema.ts";
import { extensionOf } from "./article-images.ts";
import type { ImageStores } from "./image-store.ts";

export async function eraseRun(db: Db, stores: ImageStores, externalId: string): Promise<{ imagesRemoved: number }> {
  const images = await db.select().from(articleImages).where(eq(articleImages.externalId, externalId));
  for (const image of images) await stores.of(image.storage)?.remove({ imageId: image.imageId, extension: extensionOf(image.mediaType) });
  await db.transaction(async (t) => {
    const tx = t as unknown as Db;
    await tx.delete(articleImages).where(eq(articleImages.externalId, externalId));
    await tx.delete(stepCheckpoints).where(eq(stepCheckpoints.externalId, externalId));
    await tx.delete(stepAttempts).where(eq(stepAttempts.externalId, externalId));
    await tx.delete(finishingCheckpoints).where(eq(finishingCheckpoints.externalId, externalId));
    await tx.delete(researchCheckpoints).where(eq(researchCheckpoints.externalId, externalId));
    await tx.delete(runs).where(eq(runs.externalId, externalId));
  });
  return { imagesRemoved: images.length };
}
