// The request id of whatever a process is doing: set by the gateway for each HTTP request (its
// X-Request-Id), carried in the `x-request-id` metadata of every call to a service and in the data
// of the jobs a request causes, and taken up again by the service or worker that handles them.
// Every log line written meanwhile names it (logger.ts), so one id finds a request's lines in
// every process, whether or not its trace was kept. Once the gateway's gates know whom a request
// acts for, they note the account and the key's id (never the key) here for its access line.
import { AsyncLocalStorage } from "node:async_hooks";

export const REQUEST_ID_HEADER = "x-request-id";
/** What a request id may look like when it comes from outside (a client, a proxy, a caller). */
const USABLE_ID = /^[A-Za-z0-9._:-]{8,128}$/;

/** The work in progress: its request id and, once authenticated, whom it acts for. */
export interface RequestContext {
  readonly id: string;
  accountId?: number;
  /** The API key's id; absent for a workload acting for a member (public gRPC). */
  keyId?: number;
}

const current = new AsyncLocalStorage<RequestContext>();

/** The request id of the work in progress, if it has one. */
export function currentRequestId(): string | undefined {
  return current.getStore()?.id;
}

/** Runs fn with `id` as the current request id (none: fn runs as it is); returns fn's result. */
export function withRequestId<T>(id: string | undefined, fn: () => T): T {
  return id === undefined ? fn() : current.run({ id }, fn);
}

/** Runs fn in `context`, which the caller keeps to read what fn noted in it (its access line). */
export function withRequestContext<T>(context: RequestContext, fn: () => T): T {
  return current.run(context, fn);
}

/** Notes whom the current request acts for (a key id of 0 is no key: a workload's call). */
export function noteCaller(accountId: number, keyId: number): void {
  const context = current.getStore();
  if (!context) return;
  context.accountId = accountId;
  if (keyId > 0) context.keyId = keyId;
}

/** The access line's fields naming whom a request acted for, when it got that far. */
export function callerFields(context: RequestContext): { account_id?: number; key_id?: number } {
  return context.accountId === undefined ? {} : { account_id: context.accountId, ...(context.keyId === undefined ? {} : { key_id: context.keyId }) };
}

/** The id given, when it is one a log line may carry; else undefined. */
export function usableRequestId(given: string | null | undefined): string | undefined {
  return given != null && USABLE_ID.test(given) ? given : undefined;
}
