// Self-serve sign-up on the plan the operator names (the gateway's SIGNUP_PLAN): a new user, an
// account on that plan with the user as its owner, and a first project, all at once; the user is
// not verified and has no password until they use the link mailed to the address (which sets
// both). An address that already has a user gets nothing, and the caller cannot tell: the answer
// is the same, so sign-up tells nobody which addresses have accounts.
import { eq, sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { plans, users } from "../db/schema.ts";
import { notFound, throwIfAny, type FieldErrors } from "../../../kit/src/errors.ts";
import { addMember, createAccount, createProject, createUser, type PlanRow } from "./identity.ts";
import { queueMail } from "./mail-outbox.ts";

export interface SignUp {
  email: string;
  name: string;
  /** The new account's name; the user's name and "'s account" when empty. */
  accountName: string;
}

/** The plan a reference names: its id, else its name (case aside); NOT_FOUND when none. */
export async function signUpPlan(db: Db, reference: string): Promise<PlanRow> {
  const ref = reference.trim();
  const [byId] = /^\d{1,18}$/.test(ref) ? await db.select().from(plans).where(eq(plans.id, Number(ref))) : [];
  if (byId) return byId;
  const named = await db.select().from(plans).where(sql`lower(${plans.name}) = lower(${ref})`).orderBy(plans.id).limit(1);
  if (!named[0]) throw notFound("Sign-up is not open.");
  return named[0];
}

/** Whether a sign-up was made (false: the address already had a user; not for the caller to know). */
export async function signUp(db: Db, planReference: string, input: SignUp): Promise<boolean> {
  const plan = await signUpPlan(db, planReference);
  const email = input.email.trim().toLowerCase();
  const name = input.name.trim();
  const fields: FieldErrors = {};
  if (!name) fields.name = ["The name field is required."];
  else if (name.length > 255) fields.name = ["The name must not be greater than 255 characters."];
  if (input.accountName.length > 255) fields.account_name = ["The account name must not be greater than 255 characters."];
  if (!/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email) || email.length > 320) fields.email = ["The email field must be a valid email address."];
  throwIfAny(fields);
  return db.transaction(async (t) => {
    const tx = t as unknown as Db;
    // Two sign-ups of one address at once: the second waits here and then finds the first's user.
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`accounts_billing:sign-up:${email}`}))`);
    const [taken] = await tx.select({ id: users.id }).from(users).where(eq(users.email, email));
    if (taken) return false;
    const account = await createAccount(tx, input.accountName.trim() || `${name}'s account`, plan.id);
    const created = await createUser(tx, name, email);
    // Not verified until the link mailed to the address is used.
    await tx.update(users).set({ emailVerifiedAt: null }).where(eq(users.id, created.id));
    await addMember(tx, account.id, created.id, "owner", []);
    await createProject(tx, account.id, "First project");
    await queueMail(tx, { kind: "sign_up", userId: created.id, accountId: account.id });
    return true;
  });
}
