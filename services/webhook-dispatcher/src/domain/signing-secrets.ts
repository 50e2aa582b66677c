// Per-project signing secrets: created (shown once), removed, and opened for signing. Deliveries
// read them through a short memory of the sealed rows (never the secret in clear): a burst of
// deliveries of one project reads its row once per SECRET_MEMORY_MS. This process's own changes
// forget it at once; a change made through another replica shows here within SECRET_MEMORY_MS.
import { eq } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { signingSecrets } from "../db/schema.ts";
import { openSecret, sealSecret, type SealedSecret } from "./secret-box.ts";
import { newSigningSecret } from "./standard-webhooks.ts";

// Binds each sealed secret to its project (AES-GCM associated data).
const contextOf = (projectId: number) => `signing-secret:project:${projectId}`;

export const SECRET_MEMORY_MS = 500;
const MAX_PROJECTS = 1000;

class SealedSecretMemory {
  private readonly entries = new Map<number, { row: Promise<SealedSecret | undefined>; until: number }>();
  /** Counts this process's changes, so a read that overlapped one is not remembered. */
  private changes = 0;

  read(projectId: number, load: () => Promise<SealedSecret | undefined>): Promise<SealedSecret | undefined> {
    const now = Date.now();
    const known = this.entries.get(projectId);
    if (known && known.until > now) return known.row;
    const changesBefore = this.changes;
    const entry = { row: load(), until: now + SECRET_MEMORY_MS };
    this.entries.delete(projectId);
    this.entries.set(projectId, entry);
    // Oldest first out: insertion order is the order they were read.
    while (this.entries.size > MAX_PROJECTS) this.entries.delete(this.entries.keys().next().value!);
    const drop = () => this.entries.get(projectId) === entry && this.entries.delete(projectId);
    entry.row.then(() => this.changes !== changesBefore && drop(), drop);
    return entry.row;
  }

  /** After a change has been written. */
  forget(projectId: number): void {
    this.changes++;
    this.entries.delete(projectId);
  }
}

const memories = new WeakMap<Db, SealedSecretMemory>();
function memoryOf(db: Db): SealedSecretMemory {
  let memory = memories.get(db);
  if (!memory) memories.set(db, (memory = new SealedSecretMemory()));
  return memory;
}

/** A fresh secret for the project, replacing any previous one. The caller shows it once. */
export async function setSigningSecret(db: Db, key: Buffer, projectId: number): Promise<{ secret: string; createdAt: Date }> {
  const secret = newSigningSecret();
  const sealed = sealSecret(key, secret, contextOf(projectId));
  const createdAt = new Date();
  await db
    .insert(signingSecrets)
    .values({ projectId, ...sealed, createdAt })
    .onConflictDoUpdate({ target: signingSecrets.projectId, set: { ...sealed, createdAt } });
  memoryOf(db).forget(projectId);
  return { secret, createdAt };
}

export async function removeSigningSecret(db: Db, projectId: number): Promise<boolean> {
  const removed = await db.delete(signingSecrets).where(eq(signingSecrets.projectId, projectId)).returning({ projectId: signingSecrets.projectId });
  memoryOf(db).forget(projectId);
  return removed.length > 0;
}

export async function signingSecretCreatedAt(db: Db, projectId: number): Promise<Date | undefined> {
  const [row] = await db.select({ createdAt: signingSecrets.createdAt }).from(signingSecrets).where(eq(signingSecrets.projectId, projectId));
  return row?.createdAt;
}

/** The project's secret in clear, for signing one attempt; undefined when it does not sign. */
export async function signingSecretOf(db: Db, key: Buffer, projectId: number): Promise<string | undefined> {
  const row = await memoryOf(db).read(projectId, async () => {
    const [found] = await db.select({ nonce: signingSecrets.nonce, ciphertext: signingSecrets.ciphertext }).from(signingSecrets).where(eq(signingSecrets.projectId, projectId));
    return found;
  });
  if (!row) return undefined;
  try {
    return openSecret(key, row, contextOf(projectId));
  } catch {
    // Never fall back to an unsigned delivery for a project that expects signatures.
    throw new Error(`the signing secret of project ${projectId} cannot be decrypted (was WEBHOOK_SECRET_KEY changed? It is the only key secrets are sealed with)`);
  }
}
