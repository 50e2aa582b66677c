// Who is calling: resolves the bearer token through accounts-billing and applies the gates of
// spec section 5 in order: authentication (401), disabled user (403), subscription (402), and
// on /v1 the rate limits (429).
import { ConnectError } from "@connectrpc/connect";
import type { AuthenticateKeyResponse, Plan, User } from "../../../proto/gen/articles/accounts_billing/v1/accounts_pb.ts";
import { HttpError, fromServiceError, gateError, plainError, unauthenticatedGate } from "../errors.ts";
import type { ServiceClients } from "../services.ts";
import { RateLimiter, rateLimitHeaders } from "./rate-limiter.ts";
import type { KeyResolver } from "./key-resolver.ts";
import { keyReach, type ProjectAuthorizer, type Reach } from "./project-authorizer.ts";
import type { WorkflowMemory } from "../workflows/workflow-memory.ts";
import type { ModelMemory } from "../articles/model-memory.ts";
import { noteCaller } from "../../../services/kit/src/request-context.ts";

export interface Caller {
  keyId: number;
  /** The account the key is bound to: rate limits, quota and idempotency are scoped to it. */
  accountId: number;
  userId: number;
  user: User;
  plan: Plan;
  /** How far within the user's memberships the call reaches (project-authorizer.ts). */
  reach: Reach;
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

export const UNAVAILABLE_MESSAGE = "This account is unavailable.";

async function resolveKey(keys: KeyResolver, authorization: string | null, unauthenticated: () => HttpError): Promise<AuthenticateKeyResponse> {
  const token = authorization?.match(BEARER)?.[1];
  if (!token) throw unauthenticated();
  try {
    const resolved = await keys.resolve(token);
    if (!resolved) throw unauthenticated();
    return resolved;
  } catch (error) {
    throw error instanceof ConnectError ? fromServiceError(error) : error;
  }
}

/** /user: authentication and the disabled check only (no subscription gate, plain errors). */
export async function userProbeCaller(keys: KeyResolver, authorization: string | null): Promise<User> {
  const resolved = await resolveKey(keys, authorization, () => plainError(401, "Unauthenticated."));
  noteCaller(Number(resolved.accountId), Number(resolved.keyId));
  if (resolved.user!.disabled) throw plainError(403, UNAVAILABLE_MESSAGE);
  return resolved.user!;
}

export interface V1Gate {
  limiter: RateLimiter;
  clients: ServiceClients;
  keys: KeyResolver;
  projects: ProjectAuthorizer;
  /** Which revision a project's article type resolves to, remembered until a change (workflow-memory.ts). */
  workflows: WorkflowMemory;
  /** The model catalog's answers, remembered until a change is announced (model-memory.ts). */
  models: ModelMemory;
}

/**
 * Every /v1 request. `bucket` groups endpoints that share one limit (all article endpoints
 * share "articles"). Returns the caller and the RateLimit headers to put on the response.
 */
export async function v1Caller(gate: V1Gate, authorization: string | null, bucket: string): Promise<{ caller: Caller; headers: Record<string, string> }> {
  const resolved = await resolveKey(gate.keys, authorization, unauthenticatedGate);
  return gateResolved(gate, resolved, bucket, keyReach(Number(resolved.accountId), resolved.scope));
}

/**
 * A call of a granted workload acting for a member of an account (the public gRPC API): the
 * same gates as a key's, for that user on that account, reaching no further than `reach` (the
 * workload's grant). A user who is not a member is refused with `notMember`'s error (the
 * workload's grant does not reach that user).
 */
export async function v1MemberCaller(
  gate: V1Gate,
  accountId: number,
  userId: number,
  reach: Reach,
  bucket: string,
  notMember: () => Error,
): Promise<{ caller: Caller; headers: Record<string, string> }> {
  let resolved: AuthenticateKeyResponse | null;
  try {
    resolved = await gate.keys.resolveMember(accountId, userId);
  } catch (error) {
    throw error instanceof ConnectError ? fromServiceError(error) : error;
  }
  if (!resolved) throw notMember();
  return gateResolved(gate, resolved, bucket, reach);
}

/** The gates after authentication: disabled user (403), subscription (402), rate limits (429). */
async function gateResolved(gate: V1Gate, resolved: AuthenticateKeyResponse, bucket: string, reach: Reach): Promise<{ caller: Caller; headers: Record<string, string> }> {
  const user = resolved.user!;
  // From here on the request's access line names the account and the key's id, refused or not.
  noteCaller(Number(resolved.accountId), Number(resolved.keyId));
  if (user.disabled) throw plainError(403, UNAVAILABLE_MESSAGE);
  const plan = resolved.plan;
  if (!plan) throw gateError(402, "Payment Required", "An active subscription is required.", "NO_ACTIVE_SUBSCRIPTION");
  const decision = await gate.limiter.hit(resolved.accountId, bucket, {
    perMinute: plan.requestsPerMinute,
    perHour: plan.requestsPerHour,
    perDay: plan.requestsPerDay,
  });
  const headers = rateLimitHeaders(decision);
  if (!decision.allowed) {
    throw gateError(
      429,
      "Too Many Requests",
      `Rate limit exceeded. Retry in ${decision.resetSeconds} seconds.`,
      "RATE_LIMIT_EXCEEDED",
      { retry_after: decision.resetSeconds },
      { ...headers, "Retry-After": String(decision.resetSeconds) },
    );
  }
  return {
    caller: { keyId: Number(resolved.keyId), accountId: Number(resolved.accountId), userId: Number(user.id), user, plan, reach },
    headers,
  };
}
