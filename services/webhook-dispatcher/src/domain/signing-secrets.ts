// Per-project signing secrets: created (shown once), removed, and opened for signing.
import { eq } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { signingSecrets } from "../db/schema.ts";
import { openSecret, sealSecret } from "./secret-box.ts";
import { newSigningSecret } from "./standard-webhooks.ts";

// Binds each sealed secret to its project (AES-GCM associated data).
const contextOf = (projectId: number) => `signing-secret:project:${projectId}`;

/** A fresh secret for the project, replacing any previous one. The caller shows it once. */
export async function setSigningSecret(db: Db, key: Buffer, projectId: number): Promise<{ secret: string; createdAt: Date }> {
  const secret = newSigningSecret();
  const sealed = sealSecret(key, secret, contextOf(projectId));
  const createdAt = new Date();
  await db
    .insert(signingSecrets)
    .values({ projectId, ...sealed, createdAt })
    .onConflictDoUpdate({ target: signingSecrets.projectId, set: { ...sealed, createdAt } });
  return { secret, createdAt };
}

export async function removeSigningSecret(db: Db, projectId: number): Promise<boolean> {
  const removed = await db.delete(signingSecrets).where(eq(signingSecrets.projectId, projectId)).returning({ projectId: signingSecrets.projectId });
  return removed.length > 0;
}

export async function signingSecretCreatedAt(db: Db, projectId: number): Promise<Date | undefined> {
  const [row] = await db.select({ createdAt: signingSecrets.createdAt }).from(signingSecrets).where(eq(signingSecrets.projectId, projectId));
  return row?.createdAt;
}

/** The project's secret in clear, for signing one attempt; undefined when it does not sign. */
export async function signingSecretOf(db: Db, key: Buffer, projectId: number): Promise<string | undefined> {
  const [row] = await db.select().from(signingSecrets).where(eq(signingSecrets.projectId, projectId));
  if (!row) return undefined;
  try {
    return openSecret(key, row, contextOf(projectId));
  } catch {
    // Never fall back to an unsigned delivery for a project that expects signatures.
    throw new Error(`the signing secret of project ${projectId} cannot be decrypted (was WEBHOOK_SECRET_KEY or SERVICE_TOKEN changed?)`);
  }
}
