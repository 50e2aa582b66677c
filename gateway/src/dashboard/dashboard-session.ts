// Who is signed in to the dashboard: the session cookie resolved through accounts-billing on
// every request (nothing remembered, so a session ended anywhere is refused at once), the CSRF
// check of every state change, and the caller the /v1 operations run for on the user's selected
// account.
import { Elysia } from "elysia";
import { Code, ConnectError } from "@connectrpc/connect";
import type { User } from "../../../proto/gen/articles/accounts_billing/v1/accounts_pb.ts";
import { fromServiceError, plainError } from "../errors.ts";
import { UNAVAILABLE_MESSAGE, v1MemberCaller, type Caller, type V1Gate } from "../plugins/caller.ts";
import type { CallerMount } from "../plugins/v1-gate.ts";
import type { ServiceClients } from "../services.ts";
import { csrfMatches, csrfTokenFor, DASHBOARD_PATH, sameOrigin, sessionTokenOf } from "./session-cookie.ts";

export interface DashboardSession {
  token: string;
  user: User;
  csrfToken: string;
}

/** What a session acts as: its user on the selected account. */
export interface Acting {
  userId: bigint;
  accountId: bigint;
}

const signedOut = () => plainError(401, "Unauthenticated.");
export const forgedRequest = () => plainError(403, "This request did not come from the dashboard's own pages.");

const rethrow = (error: unknown): never => {
  throw error instanceof ConnectError ? fromServiceError(error) : error;
};

/** The request's session; 401 without a live one (keys never open the dashboard: only the cookie counts). */
export async function sessionOf(clients: ServiceClients, request: Request): Promise<DashboardSession> {
  const token = sessionTokenOf(request);
  if (!token) throw signedOut();
  try {
    const { user } = await clients.sessions.authenticateSession({ sessionToken: token });
    return { token, user: user!, csrfToken: csrfTokenFor(token) };
  } catch (error) {
    if (error instanceof ConnectError && error.code === Code.Unauthenticated) throw signedOut();
    return rethrow(error);
  }
}

/** A state change must come from the dashboard's pages and carry the session's CSRF token. */
export function checkStateChange(request: Request, session: DashboardSession): void {
  if (!sameOrigin(request) || !csrfMatches(session.token, request.headers.get("x-csrf-token"))) throw forgedRequest();
}

/** The session's user on their selected account; 409 when none is selected. */
export function actingOf(session: DashboardSession): Acting {
  if (session.user.currentAccountId === undefined) throw plainError(409, "No account is selected: choose one first.");
  return { userId: session.user.id, accountId: session.user.currentAccountId };
}

/**
 * The caller the /v1 operations run for: the user as a member of the selected account, through
 * the same gates as a key (disabled user, subscription, rate limits), reaching that account's
 * projects only. keyId 0: no key is involved.
 */
export async function sessionCaller(gate: V1Gate, session: DashboardSession, bucket: string): Promise<Caller> {
  if (session.user.disabled) throw plainError(403, UNAVAILABLE_MESSAGE);
  const { userId, accountId } = actingOf(session);
  const reach = { accountIds: new Set([Number(accountId)]), readOnly: false };
  const { caller } = await v1MemberCaller(gate, Number(accountId), Number(userId), reach, bucket, () => plainError(404, "No such account."));
  return caller;
}

/** Puts a plugin's routes behind the session; state changes need the CSRF token as well. Unnamed: each plugin that uses it gets its own. */
export const signedIn = (clients: ServiceClients) =>
  new Elysia().resolve({ as: "scoped" }, async ({ request }) => {
    const session = await sessionOf(clients, request);
    if (request.method !== "GET" && request.method !== "HEAD") checkStateChange(request, session);
    return { session };
  });

/** The /v1 routes' handlers served under /dashboard/api for the session's member (routes/workflows.ts, routes/publishing.ts). */
export const sessionMount = (gate: V1Gate): CallerMount => ({
  prefix: `${DASHBOARD_PATH}/api`,
  gateFor: (bucket) =>
    new Elysia({ name: "dashboard-caller", seed: bucket }).resolve({ as: "scoped" }, async ({ request }) => {
      const session = await sessionOf(gate.clients, request);
      if (request.method !== "GET" && request.method !== "HEAD") checkStateChange(request, session);
      return { caller: await sessionCaller(gate, session, bucket) };
    }),
});
