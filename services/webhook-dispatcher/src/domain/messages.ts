// Completion messages, frozen at the first attempt: every retry sends the same body to the same
// URL, even if the article record moves on (its updated_at advances as attempts are logged).
import { eq } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { messages } from "../db/schema.ts";

export interface CompletionMessage {
  id: string;
  externalId: string;
  versionId: number;
  projectId: number;
  url: string;
  body: string;
}

/** The stored message with this id, or the one `compose` builds, stored first-writer-wins. */
export async function frozenMessage(db: Db, id: string, compose: () => Promise<CompletionMessage>): Promise<CompletionMessage> {
  const [existing] = await db.select().from(messages).where(eq(messages.id, id));
  if (existing) return existing;
  const fresh = await compose();
  const [inserted] = await db.insert(messages).values(fresh).onConflictDoNothing({ target: messages.id }).returning();
  if (inserted) return inserted;
  // Another worker froze it in between; its copy is the one every attempt sends.
  const [stored] = await db.select().from(messages).where(eq(messages.id, id));
  return stored!;
}
