// A project's publishing destinations: what a user may store (checked here, one message per field)
// and how the credential is kept (sealed like signing secrets, bound to the project, so a row
// copied onto another project's destination fails to open). Reads never return the credential;
// only the publishing job and the connection check open it.
import { and, asc, eq, sql } from "drizzle-orm";
import { invalidFields, notFound, throwIfAny, type FieldErrors } from "../../../kit/src/errors.ts";
import { PUBLISHING_LIMITS as LIMITS } from "../../../kit/src/rules/publishing.ts";
import { checkUrlShape } from "../../../kit/src/rules/url-shape.ts";
import type { Db } from "../db/client.ts";
import { destinations, type DestinationDefaults } from "../db/schema.ts";
import { openSecret, sealSecret } from "./secret-box.ts";

export const DESTINATION_KINDS = ["wordpress", "ghost"] as const;
export type DestinationKind = (typeof DESTINATION_KINDS)[number];

/** Post statuses a destination may default to, and those a single publish may also ask for (a schedule). */
export const POST_STATUSES: Record<DestinationKind, { defaults: readonly string[]; scheduled: string }> = {
  wordpress: { defaults: ["draft", "pending", "private", "publish"], scheduled: "future" },
  ghost: { defaults: ["draft", "published"], scheduled: "scheduled" },
};

// Ghost's Admin API keys are "<24 hex id>:<64 hex secret>" (Ghost Admin → Integrations).
const GHOST_ADMIN_KEY = /^[0-9a-f]{24}:[0-9a-f]{64}$/;

export type DestinationRecord = typeof destinations.$inferSelect;
/** A destination as every read shows it: no credential. */
export type Destination = Omit<DestinationRecord, "credentialNonce" | "credentialCiphertext">;

export interface NewDestination {
  projectId: number;
  kind: string;
  name: string;
  siteUrl: string;
  username?: string;
  credential: string;
  defaultStatus?: string;
  defaultCategories: string[];
  defaultTags: string[];
  authorId?: number;
}

const credentialContext = (projectId: number) => `destination:${projectId}`;

/** Checks a list of category or tag names into `errors` under `field`; returns them trimmed. */
export function termNames(field: string, names: readonly string[], errors: FieldErrors): string[] {
  const trimmed = names.map((n) => n.trim());
  if (trimmed.length > LIMITS.terms) errors[field] = [`At most ${LIMITS.terms} ${field} may be given.`];
  else if (trimmed.some((n) => n.length === 0 || n.length > LIMITS.term)) errors[field] = [`Each of ${field} must be 1 to ${LIMITS.term} characters.`];
  return trimmed;
}

export interface DestinationRules {
  /** ALLOW_PRIVATE_URLS (local development, tests): plain http sites may be added. */
  allowPlainHttp: boolean;
}

/** The destination's fields as they will be stored, or INVALID_ARGUMENT naming every field that is wrong. */
export function checkedDestination(input: NewDestination, rules: DestinationRules): { kind: DestinationKind; defaults: DestinationDefaults; name: string; siteUrl: string; username: string | null } {
  const errors: FieldErrors = {};
  const kind = (DESTINATION_KINDS as readonly string[]).includes(input.kind) ? (input.kind as DestinationKind) : undefined;
  if (!kind) errors.kind = [`kind must be one of ${DESTINATION_KINDS.join(", ")}.`];
  const name = input.name.trim();
  if (name.length === 0 || name.length > LIMITS.name) errors.name = [`name must be 1 to ${LIMITS.name} characters.`];
  const siteUrl = input.siteUrl.trim();
  // The credential goes with every request to the site: never in clear outside development.
  const httpsOnly = !rules.allowPlainHttp;
  const tooLong = siteUrl.length > LIMITS.siteUrl;
  const shape = tooLong ? `longer than ${LIMITS.siteUrl} characters` : checkUrlShape(siteUrl, httpsOnly ? ["https:"] : ["https:", "http:"]);
  if (shape && httpsOnly && !tooLong && checkUrlShape(siteUrl) === null) errors.site_url = ["site_url must be an https:// address: the credential is sent with every request to the site."];
  else if (shape) errors.site_url = [`site_url must be the site's ${httpsOnly ? "https" : "https or http"} address: ${shape}.`];
  const username = input.username?.trim() || null;
  if (kind === "wordpress" && (!username || username.length > LIMITS.username)) errors.username = [`username (the WordPress login name) is required, at most ${LIMITS.username} characters.`];
  if (kind === "ghost" && username) errors.username = ["username is for WordPress destinations only."];
  const credential = input.credential.trim();
  if (kind === "wordpress" && (credential.length === 0 || credential.length > LIMITS.credential)) {
    errors.credential = ["credential (an application password of the WordPress user: Users → Profile → Application Passwords) is required."];
  }
  if (kind === "ghost" && !GHOST_ADMIN_KEY.test(credential)) errors.credential = ["credential must be a Ghost Admin API key, \"<id>:<secret>\" (Ghost Admin → Settings → Integrations)."];
  const statuses = kind ? POST_STATUSES[kind].defaults : [];
  const status = input.defaultStatus ?? "draft";
  if (kind && !statuses.includes(status)) errors.default_status = [`default_status must be one of ${statuses.join(", ")} for ${kind}.`];
  const categories = termNames("default_categories", input.defaultCategories, errors);
  if (kind === "ghost" && categories.length > 0) errors.default_categories = ["Ghost has no categories: use default_tags."];
  const tags = termNames("default_tags", input.defaultTags, errors);
  if (input.authorId !== undefined && (kind !== "wordpress" || !Number.isSafeInteger(input.authorId) || input.authorId <= 0)) {
    errors.author_id = [kind === "wordpress" ? "author_id must be a WordPress user id (a positive integer)." : "author_id is for WordPress destinations only."];
  }
  throwIfAny(errors);
  return { kind: kind!, name, siteUrl, username, defaults: { status, categories, tags, authorId: input.authorId ?? null } };
}

const withoutCredential = ({ credentialNonce: _n, credentialCiphertext: _c, ...destination }: DestinationRecord): Destination => destination;

/**
 * Refused (INVALID_ARGUMENT on destinations_per_project) when the project already holds `cap`
 * destinations: the plan's cap in force, as accounts-billing answers it with the project.
 */
export async function assertRoomForDestination(db: Db, projectId: number, cap: number): Promise<void> {
  const [{ held }] = await db.select({ held: sql<number>`count(*)::int` }).from(destinations).where(eq(destinations.projectId, projectId));
  if (held >= cap) {
    throw invalidFields({ destinations_per_project: [`The project already has ${held} publishing destinations; this plan allows at most ${cap} in one project (destinations_per_project).`] });
  }
}

/**
 * Stores a destination within the project's cap. Additions to one project are decided one at a
 * time, under a transaction-scoped lock of the project, so concurrent ones on any number of
 * replicas cannot together pass the cap.
 */
export async function createDestination(db: Db, key: Buffer, input: NewDestination, rules: DestinationRules, cap: number): Promise<Destination> {
  const { kind, name, siteUrl, username, defaults } = checkedDestination(input, rules);
  const sealed = sealSecret(key, input.credential.trim(), credentialContext(input.projectId));
  return db.transaction(async (t) => {
    const tx = t as unknown as Db;
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext('webhook_dispatcher:new-destination'), hashtext(${String(input.projectId)}))`);
    await assertRoomForDestination(tx, input.projectId, cap);
    const [row] = await tx
      .insert(destinations)
      .values({ projectId: input.projectId, kind, name, siteUrl, username, defaults, credentialNonce: sealed.nonce, credentialCiphertext: sealed.ciphertext })
      .returning();
    return withoutCredential(row!);
  });
}

export async function listDestinations(db: Db, projectId: number): Promise<Destination[]> {
  const rows = await db.select().from(destinations).where(eq(destinations.projectId, projectId)).orderBy(asc(destinations.id));
  return rows.map(withoutCredential);
}

async function destinationRecord(db: Db, projectId: number, destinationId: number): Promise<DestinationRecord> {
  const [row] = await db.select().from(destinations).where(and(eq(destinations.id, destinationId), eq(destinations.projectId, projectId)));
  if (!row) throw notFound("Destination not found.");
  return row;
}

export const getDestination = async (db: Db, projectId: number, destinationId: number) => withoutCredential(await destinationRecord(db, projectId, destinationId));

/** A destination with its credential opened: for the publishing job and the connection check only. */
export async function openDestination(db: Db, key: Buffer, projectId: number, destinationId: number): Promise<{ destination: Destination; credential: string }> {
  const row = await destinationRecord(db, projectId, destinationId);
  const credential = openSecret(key, { nonce: row.credentialNonce, ciphertext: row.credentialCiphertext }, credentialContext(row.projectId));
  return { destination: withoutCredential(row), credential };
}

export async function deleteDestination(db: Db, projectId: number, destinationId: number): Promise<boolean> {
  const deleted = await db.delete(destinations).where(and(eq(destinations.id, destinationId), eq(destinations.projectId, projectId))).returning({ id: destinations.id });
  return deleted.length > 0;
}

/** A positive id from a request field, else INVALID_ARGUMENT naming it. */
export function positiveId(field: string, value: bigint): number {
  if (value <= 0n || value > BigInt(Number.MAX_SAFE_INTEGER)) throw invalidFields({ [field]: [`${field} must be a positive integer.`] });
  return Number(value);
}
