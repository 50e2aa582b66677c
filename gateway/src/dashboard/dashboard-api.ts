// The dashboard's JSON surface under /dashboard/api: session-authenticated (the HttpOnly cookie,
// never a key), every state change CSRF-checked (session-cookie.ts), running the operations /v1
// runs (usage, articles) for the signed-in user on the selected account, and the self-service of
// keys, members and passwords through accounts-billing. The browser never holds a key: a new
// key's token is shown once in the answer that created it and kept nowhere.
import { Elysia } from "elysia";
import { Code, ConnectError } from "@connectrpc/connect";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { fromServiceError, HttpError, plainError } from "../errors.ts";
import { presentUser } from "../presenters/user.ts";
import { Validator } from "../validation.ts";
import type { V1Gate } from "../plugins/caller.ts";
import type { UsageOperations } from "../usage/usage-operations.ts";
import type { ArticleOperations } from "../articles/article-operations.ts";
import { dashboardArticles } from "./dashboard-articles.ts";
import { envOptional } from "../../../services/kit/src/config.ts";
import { passwordLinkAddress } from "../../../services/kit/src/dashboard-links.ts";
import { actingOf, forgedRequest, sessionCaller, signedIn, type DashboardSession } from "./dashboard-session.ts";
import { presentAccount, presentAuditEvent, presentKey, presentMember, ROLE_NAMES } from "./dashboard-presenters.ts";
import { clearedSessionCookie, DASHBOARD_PATH, sameOrigin, secureCookies, sessionCookie, sessionTokenOf } from "./session-cookie.ts";
import type { SignInLimits } from "./sign-in-limits.ts";
import { mailedLinks } from "./mailed-links.ts";
import { bodyOf, clientAddress, type PeerServer } from "./request-parts.ts";

const API = `${DASHBOARD_PATH}/api`;
const SIGN_IN_REFUSED = "These credentials do not match our records.";

export interface DashboardDeps {
  gate: V1Gate;
  usage: UsageOperations;
  articles: ArticleOperations;
  signInLimits: SignInLimits;
  /** Counters of "forgot password" requests and of sign-ups (per client and per email). */
  passwordResetLimits: SignInLimits;
  signUpLimits: SignInLimits;
  /** SIGNUP_PLAN: the plan (id or name) self-serve sign-ups get; unset: no sign-up (404). */
  signUpPlan: string | undefined;
  /** Whether the public address is https (cookies get Secure). */
  publicHttps: boolean;
}


/** Where the gateway is reached: PUBLIC_BASE_URL when set, else the request's own origin. */
const publicBase = (request: Request) => envOptional(process.env, "PUBLIC_BASE_URL")?.replace(/\/$/, "") ?? new URL(request.url).origin;

/** An id in a body: a positive whole number an int64 holds exactly. */
const isId = (id: unknown): id is number => Number.isSafeInteger(id) && (id as number) > 0;

/** A body's list of ids (absent or null: none); a bad list is reported on `field`. */
function idList(v: Validator, input: Record<string, unknown>, field: string, report = field): bigint[] {
  const ids = input[field] ?? [];
  if (Array.isArray(ids) && ids.every(isId)) return ids.map(BigInt);
  v.fail(report, `The ${report.replace(/[._]/g, " ")} field must be a list of positive integer ids.`);
  return [];
}

const idParam = (value: string) => {
  if (!/^\d{1,18}$/.test(value)) throw plainError(404, "Not found.");
  return BigInt(value);
};

const rethrow = (error: unknown): never => {
  throw error instanceof ConnectError ? fromServiceError(error) : error;
};


function sessionJson(session: DashboardSession, accounts: ReturnType<typeof presentAccount>[]) {
  const current = accounts.find((a) => a.id === Number(session.user.currentAccountId ?? 0)) ?? null;
  return { user: presentUser(session.user), csrf_token: session.csrfToken, accounts, current_account: current };
}

function scopeOf(v: Validator) {
  const scope = v.object("scope", { nullable: true });
  if (!scope) return undefined;
  const s = new Validator(scope);
  const accountOnly = s.boolean("account_only") ?? false;
  const readOnly = s.boolean("read_only") ?? false;
  const projectIds = idList(v, s.input, "project_ids", "scope.project_ids");
  for (const [field, messages] of Object.entries(s.errors)) for (const m of messages) v.fail(`scope.${field}`, m);
  return { accountOnly, projectIds, readOnly };
}

function memberChange(v: Validator) {
  const role = v.oneOf("role", Object.keys(ROLE_NAMES), { required: true });
  return { role: ROLE_NAMES[role ?? "viewer"]!, projectIds: idList(v, v.input, "project_ids"), viewOnlyProjectIds: idList(v, v.input, "view_only_project_ids") };
}

export function dashboardApi(deps: DashboardDeps) {
  const { gate, usage, signInLimits } = deps;
  const { clients } = gate;
  const secure = (request: Request) => secureCookies(request, deps.publicHttps);


  const startSession = (request: Request, set: { headers: Record<string, unknown> }, started: { sessionToken: string; expiresAt?: { seconds: bigint } }) => {
    const expires = new Date(Number(started.expiresAt?.seconds ?? 0n) * 1000);
    set.headers["set-cookie"] = sessionCookie(started.sessionToken, expires, secure(request));
  };

  /** Ends the session the request still carries (a sign-in rotates it). */
  const endCarried = async (request: Request) => {
    const earlier = sessionTokenOf(request);
    if (earlier) await clients.sessions.endSession({ sessionToken: earlier }).catch(() => {});
  };

  const open = new Elysia({ name: "dashboard-open" })
    // Signing in: JSON only (a form cannot post it across sites) and from the dashboard's origin;
    // failures count per client and per email, and every refusal reads the same.
    .post(`${API}/sign-in`, async ({ request, body, set, server }) => {
      if (!sameOrigin(request)) throw forgedRequest();
      const v = bodyOf(body);
      const email = v.string("email", { required: true, max: 320 }) ?? "";
      const password = v.string("password", { required: true, max: 1000 }) ?? "";
      v.check();
      const address = clientAddress(server as PeerServer, request);
      const wait = await signInLimits.retryAfter(address, email);
      if (wait > 0) throw new HttpError(429, { message: `Too many failed sign-ins. Retry in ${wait} seconds.`, retry_after: wait }, { "Retry-After": String(wait) });
      try {
        const started = await clients.sessions.signIn({ email, password });
        await endCarried(request);
        startSession(request, set, started);
        return { success: true, data: { user: presentUser(started.user!) } };
      } catch (error) {
        if (error instanceof ConnectError && error.code === Code.Unauthenticated) {
          await signInLimits.recordFailure(address, email);
          throw plainError(401, SIGN_IN_REFUSED);
        }
        return rethrow(error);
      }
    })
    // A one-time link: sets the password and signs in.
    .post(`${API}/set-password`, async ({ request, body, set }) => {
      if (!sameOrigin(request)) throw forgedRequest();
      const v = bodyOf(body);
      const token = v.string("token", { required: true, max: 200 }) ?? "";
      const password = v.string("password", { required: true, max: 1000 }) ?? "";
      v.check();
      try {
        const { session } = await clients.sessions.redeemLink({ linkToken: token, password });
        await endCarried(request);
        startSession(request, set, session!);
        return { success: true, data: { user: presentUser(session!.user!) } };
      } catch (error) {
        if (error instanceof ConnectError && error.code === Code.Unauthenticated) throw plainError(401, error.rawMessage);
        return rethrow(error);
      }
    });

  // Everything but signing in needs the session.
  const session = new Elysia({ name: "dashboard-signed-in" })
    .use(signedIn(clients))
    .get(`${API}/session`, async ({ session }) => {
      const { accounts } = await clients.tenantAdmin.listUserAccounts({ userId: session.user.id });
      return { success: true, data: sessionJson(session, accounts.map(presentAccount)) };
    })
    .post(`${API}/sign-out`, async ({ session, request, set }) => {
      await clients.sessions.endSession({ sessionToken: session.token });
      set.headers["set-cookie"] = clearedSessionCookie(secure(request));
      return { success: true };
    })
    .post(`${API}/password`, async ({ session, body }) => {
      const v = bodyOf(body);
      const current = v.string("current_password", { required: true, max: 1000 }) ?? "";
      const next = v.string("new_password", { required: true, max: 1000 }) ?? "";
      v.check();
      const { endedSessions } = await clients.sessions.changePassword({ sessionToken: session.token, currentPassword: current, newPassword: next }).catch(rethrow);
      return { success: true, data: { ended_sessions: endedSessions } };
    })
    .post(`${API}/account`, async ({ session, body }) => {
      const v = bodyOf(body);
      const accountId = v.integer("account_id", { required: true, min: 1, max: Number.MAX_SAFE_INTEGER });
      v.check();
      const { user } = await clients.tenantAdmin.switchAccount({ acting: { userId: session.user.id, accountId: BigInt(accountId!) } }).catch(rethrow);
      return { success: true, data: presentUser(user!) };
    })
    // ---- keys ----
    .get(`${API}/keys`, async ({ session }) => ({ success: true, data: (await clients.tenantAdmin.listKeys({ acting: actingOf(session) }).catch(rethrow)).keys.map(presentKey) }))
    .post(`${API}/keys`, async ({ session, body, set }) => {
      const v = bodyOf(body);
      const name = v.string("name", { required: true, max: 100 });
      const expiresAt = v.string("expires_at", { nullable: true, max: 40 });
      const scope = scopeOf(v);
      const expiry = expiresAt ? new Date(expiresAt) : undefined;
      if (expiry && Number.isNaN(expiry.getTime())) v.fail("expires_at", "The expires at field must be an ISO 8601 date and time.");
      v.check();
      const created = await clients.tenantAdmin
        .createKey({ acting: actingOf(session), name: name!, expiresAt: expiry ? timestampFromDate(expiry) : undefined, scope })
        .catch(rethrow);
      set.status = 201;
      return { success: true, message: "Key created. Copy its token now: it is not shown again.", data: { ...presentKey(created.key!), token: created.token } };
    })
    .post(`${API}/keys/:id/revoke`, async ({ session, params }) => ({
      success: true,
      data: presentKey((await clients.tenantAdmin.revokeKey({ acting: actingOf(session), keyId: idParam(params.id) }).catch(rethrow)).key!),
    }))
    .post(`${API}/keys/:id/roll`, async ({ session, params, body, set }) => {
      const v = bodyOf(body);
      const grace = v.integer("grace_seconds", { min: 0, max: 604_800 }) ?? 0;
      v.check();
      const rolled = await clients.tenantAdmin.rollKey({ acting: actingOf(session), keyId: idParam(params.id), graceSeconds: grace }).catch(rethrow);
      set.status = 201;
      return { success: true, message: "Key rolled. Copy the new token now: it is not shown again.", data: { ...presentKey(rolled.key!), token: rolled.token, old_key: presentKey(rolled.oldKey!) } };
    })
    // ---- usage: the operation GET /v1/usage runs ----
    .get(`${API}/usage`, async ({ session }) => ({ success: true, data: await usage.report(await sessionCaller(gate, session, "usage")) }))
    // ---- members ----
    .get(`${API}/members`, async ({ session }) => ({ success: true, data: (await clients.tenantAdmin.listMembers({ acting: actingOf(session) }).catch(rethrow)).members.map(presentMember) }))
    .post(`${API}/members`, async ({ session, body, request, set }) => {
      const v = bodyOf(body);
      const email = v.string("email", { required: true, max: 320 });
      const name = v.string("name", { nullable: true, max: 255 }) ?? "";
      const change = memberChange(v);
      v.check();
      const invited = await clients.tenantAdmin.inviteMember({ acting: actingOf(session), email: email!, name, ...change }).catch(rethrow);
      set.status = 201;
      const link = invited.linkToken ? passwordLinkAddress(publicBase(request), invited.linkToken) : null;
      return { success: true, data: { ...presentMember(invited.member!), sign_in_link: link, mailed: invited.mailed } };
    })
    .patch(`${API}/members/:userId`, async ({ session, params, body }) => {
      const v = bodyOf(body);
      const change = memberChange(v);
      v.check();
      const { member } = await clients.tenantAdmin.updateMember({ acting: actingOf(session), userId: idParam(params.userId), ...change }).catch(rethrow);
      return { success: true, data: presentMember(member!) };
    })
    .delete(`${API}/members/:userId`, async ({ session, params }) => {
      await clients.tenantAdmin.removeAccountMember({ acting: actingOf(session), userId: idParam(params.userId) }).catch(rethrow);
      return { success: true };
    })
    .get(`${API}/audit`, async ({ session }) => ({ success: true, data: (await clients.tenantAdmin.listAuditEvents({ acting: actingOf(session), limit: 100 }).catch(rethrow)).events.map(presentAuditEvent) }))
    // The selected account's projects the user reaches (key scopes, article creation).
    .get(`${API}/projects`, async ({ session }) => {
      const caller = await sessionCaller(gate, session, "articles");
      const projects = await gate.projects.viewable(caller);
      return { success: true, data: projects.map((p) => ({ id: Number(p.id), name: p.name })) };
    });

  return new Elysia({ name: "dashboard-api" }).use(open).use(mailedLinks(deps)).use(session).use(dashboardArticles(gate, deps.articles));
}
