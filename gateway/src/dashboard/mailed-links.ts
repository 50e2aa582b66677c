// The dashboard's requests that end in a mailed one-time link, open without a session: "forgot
// password" and self-serve sign-up. Both answer the same whether or not the address has a user
// (202, one message), so neither tells anybody which addresses have accounts; both are counted
// per client address and per email address like sign-in, every request counting (each may send
// a mail); both come only from the dashboard's own pages (JSON, same origin). Without mail
// (accounts-billing has no SMTP_URL) they answer 404, as sign-up does without SIGNUP_PLAN.
import { Elysia } from "elysia";
import { Code, ConnectError } from "@connectrpc/connect";
import { fromServiceError, HttpError, plainError } from "../errors.ts";
import type { V1Gate } from "../plugins/caller.ts";
import { forgedRequest } from "./dashboard-session.ts";
import { bodyOf, clientAddress, type PeerServer } from "./request-parts.ts";
import { DASHBOARD_PATH, sameOrigin } from "./session-cookie.ts";
import type { SignInLimits } from "./sign-in-limits.ts";

const API = `${DASHBOARD_PATH}/api`;
const notOpen = () => plainError(404, "Not found.");

/** Counts the request; 429 once the client or the address asked too often in the window. */
async function countRequest(limits: SignInLimits, request: Request, server: unknown, email: string): Promise<void> {
  const address = clientAddress(server as PeerServer, request);
  const wait = await limits.retryAfter(address, email);
  if (wait > 0) throw new HttpError(429, { message: `Too many requests. Retry in ${wait} seconds.`, retry_after: wait }, { "Retry-After": String(wait) });
  await limits.recordFailure(address, email);
}

/** No mail configured, or no such sign-up plan: the feature is not there. */
const closedOr = (error: unknown): never => {
  if (error instanceof ConnectError && (error.code === Code.FailedPrecondition || error.code === Code.NotFound)) throw notOpen();
  throw error instanceof ConnectError ? fromServiceError(error) : error;
};

/** What the two requests need of the dashboard's settings (dashboard-api.ts's DashboardDeps has them). */
export interface MailedLinkDeps {
  gate: V1Gate;
  passwordResetLimits: SignInLimits;
  signUpLimits: SignInLimits;
  /** SIGNUP_PLAN; unset: no sign-up (404). */
  signUpPlan: string | undefined;
}

export function mailedLinks(deps: MailedLinkDeps) {
  const { clients } = deps.gate;
  return new Elysia({ name: "dashboard-mailed-links" })
    .post(`${API}/forgot-password`, async ({ request, body, set, server }) => {
      if (!sameOrigin(request)) throw forgedRequest();
      const v = bodyOf(body);
      const email = v.string("email", { required: true, max: 320 }) ?? "";
      v.check();
      await countRequest(deps.passwordResetLimits, request, server, email);
      await clients.sessions.requestPasswordReset({ email }).catch(closedOr);
      set.status = 202;
      return { success: true, message: "If this address has a sign-in, a link to set a new password is on its way. It works once, for an hour." };
    })
    // Whether sign-up is open: the page shows its form only then.
    .get(`${API}/sign-up`, () => {
      if (!deps.signUpPlan) throw notOpen();
      return { success: true, data: { open: true } };
    })
    .post(`${API}/sign-up`, async ({ request, body, set, server }) => {
      if (!deps.signUpPlan) throw notOpen();
      if (!sameOrigin(request)) throw forgedRequest();
      const v = bodyOf(body);
      const email = v.string("email", { required: true, max: 320 }) ?? "";
      const name = v.string("name", { required: true, max: 255 }) ?? "";
      const accountName = v.string("account_name", { nullable: true, max: 255 }) ?? "";
      v.check();
      await countRequest(deps.signUpLimits, request, server, email);
      await clients.sessions.signUp({ plan: deps.signUpPlan, email, name, accountName }).catch(closedOr);
      set.status = 202;
      return { success: true, message: "Check your mail: a link to confirm the address and set your password is on its way." };
    });
}
