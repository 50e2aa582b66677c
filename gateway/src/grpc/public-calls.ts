// What every method of the public gRPC API does around its operation: the /v1 gates for the
// caller, subscription, the method's rate-limit bucket (whose RateLimit headers go out as
// response metadata), and refusals answered as gRPC codes with Google's error details.
//
// Who acts is named one of two ways: an API key in the `authorization` metadata (`Bearer <key>`),
// as /v1 takes it; or, for an internal team's workload granted it (PUBLIC_GRPC_WORKLOADS), the
// workload's identity token in `authorization` with the account and user it acts for in
// `x-account-id` and `x-user-id`, limited by its grant to those accounts, their members and the
// methods of its roles (workload-roles.ts). Either way the acting user's project access is checked by the
// operation itself, exactly as for /v1; a workload's call reaches only projects of the accounts its
// grant allows the method for, whatever other accounts the acting user belongs to.
import { ConnectError, type HandlerContext } from "@connectrpc/connect";
import type { Logger } from "../../../services/kit/src/logger.ts";
import { countRefusal } from "../../../services/kit/src/access-policy.ts";
import type { CallerVerifier } from "../../../services/kit/src/workload-identity.ts";
import { plainError, validationError } from "../errors.ts";
import { v1Caller, v1MemberCaller, type Caller, type V1Gate } from "../plugins/caller.ts";
import { FULL_REACH } from "../plugins/project-authorizer.ts";
import { grantedAccounts, mayCall, type ActingWorkloads } from "./acting-workloads.ts";
import { publicGrpcError } from "./public-errors.ts";

/** Internal teams' workloads acting for accounts: their tokens' check and their grants. */
export interface PublicWorkloads {
  verifier: CallerVerifier;
  acting: ActingWorkloads;
}

export const ACCOUNT_HEADER = "x-account-id";
export const USER_HEADER = "x-user-id";

/** A positive id of the metadata, or the field error naming it. */
function idOf(ctx: HandlerContext, header: string): number {
  const value = ctx.requestHeader.get(header)?.trim() ?? "";
  if (!/^[1-9]\d{0,17}$/.test(value)) throw validationError({ [header]: [`The ${header} metadata must be a positive whole number.`] });
  return Number(value);
}

/** Refuses a workload's call outside its grant: PERMISSION_DENIED naming both, logged and counted. */
function refuse(logger: Logger, workload: string, method: string, accountId: number, message: string): never {
  countRefusal(workload, method);
  logger.warn("call refused", { caller: workload, method, accountId });
  throw plainError(403, message);
}

/**
 * The caller of a workload's call acting for an account: its token, its grant, then the gates.
 * `alsoDoes` names the other methods whose effect the call has (a creation that publishes): the
 * grant must allow them too, so a role cannot reach through one method what it may not call.
 */
async function actingCaller(gate: V1Gate, workloads: PublicWorkloads, ctx: HandlerContext, bucket: string, logger: Logger, alsoDoes: readonly string[]) {
  const accountId = idOf(ctx, ACCOUNT_HEADER);
  const userId = idOf(ctx, USER_HEADER);
  let workload: string;
  try {
    workload = await workloads.verifier.callerOf(ctx.requestHeader.get("authorization"));
  } catch (error) {
    throw plainError(401, `Unauthenticated: ${error instanceof ConnectError ? error.rawMessage : (error as Error).message}.`);
  }
  const method = `${ctx.service.typeName}/${ctx.method.name}`;
  // Outside the grant's accounts, or its methods for that account: the same refusal.
  if (!mayCall(workloads.acting, workload, accountId, method)) refuse(logger, workload, method, accountId, `Workload "${workload}" may not call ${method} for account ${accountId}.`);
  for (const effect of alsoDoes) {
    if (!mayCall(workloads.acting, workload, accountId, effect)) refuse(logger, workload, method, accountId, `Workload "${workload}" may not call ${method} this way for account ${accountId}: it would also do what ${effect} does, which its grant does not allow.`);
  }
  // The acting user must be one the grant allows: a member of the granted account.
  const notMember = () => refuse(logger, workload, method, accountId, `Workload "${workload}" may not call ${method} for user ${userId}: not a member of account ${accountId}.`);
  const granted = grantedAccounts(workloads.acting, workload, [method, ...alsoDoes]);
  return v1MemberCaller(gate, accountId, userId, granted === "all" ? FULL_REACH : { accountIds: granted, readOnly: false }, bucket, notMember);
}

export interface PublicCalls {
  /**
   * The caller of a call, through the gates of /v1 with `bucket`'s rate limit; `alsoDoes` names
   * other methods whose effect this call has (a workload's grant must allow them too).
   */
  callerOf(bucket: string): (ctx: HandlerContext, alsoDoes?: readonly string[]) => Promise<Caller>;
  /** Runs an operation, answering its refusals as gRPC codes with Google's error details. */
  answer<T>(method: string, run: () => Promise<T>): Promise<T>;
}

export function publicCalls(gate: V1Gate, workloads: PublicWorkloads, logger: Logger): PublicCalls {
  return {
    callerOf: (bucket) => async (ctx, alsoDoes = []) => {
      const acting = ctx.requestHeader.has(ACCOUNT_HEADER) || ctx.requestHeader.has(USER_HEADER);
      const { caller, headers } = acting ? await actingCaller(gate, workloads, ctx, bucket, logger, alsoDoes) : await v1Caller(gate, ctx.requestHeader.get("authorization"), bucket);
      for (const [name, value] of Object.entries(headers)) ctx.responseHeader.set(name, value);
      return caller;
    },
    async answer(method, run) {
      try {
        return await run();
      } catch (error) {
        throw publicGrpcError(error, (unexpected) => logger.error("grpc call failed", { method, error: unexpected instanceof Error ? unexpected.message : String(unexpected) }));
      }
    },
  };
}

/** A number of a request as the public API's query takes it (absent stays absent). */
export const queryNumber = (n: number | bigint | undefined) => (n === undefined ? undefined : String(n));

/** The public API's page meta as the proto's PageMeta. */
export const pageMetaOf = (meta: { current_page: number; last_page: number; per_page: number; total: number }) => ({
  currentPage: meta.current_page,
  lastPage: meta.last_page,
  perPage: meta.per_page,
  total: BigInt(meta.total),
});
