// The request id of whatever a process is doing: set by the gateway for each HTTP request (its
// X-Request-Id), carried in the `x-request-id` metadata of every call to a service and in the data
// of the jobs a request causes, and taken up again by the service or worker that handles them.
// Every log line written meanwhile names it (logger.ts), so one id finds a request's lines in
// every process, whether or not its trace was kept.
import { AsyncLocalStorage } from "node:async_hooks";

export const REQUEST_ID_HEADER = "x-request-id";
/** What a request id may look like when it comes from outside (a client, a proxy, a caller). */
const USABLE_ID = /^[A-Za-z0-9._:-]{8,128}$/;

const current = new AsyncLocalStorage<string>();

/** The request id of the work in progress, if it has one. */
export function currentRequestId(): string | undefined {
  return current.getStore();
}

/** Runs fn with `id` as the current request id (none: fn runs as it is). */
export function withRequestId<T>(id: string | undefined, fn: () => T): T {
  return id === undefined ? fn() : current.run(id, fn);
}

/** The id given, when it is one a log line may carry; else undefined. */
export function usableRequestId(given: string | null | undefined): string | undefined {
  return given != null && USABLE_ID.test(given) ? given : undefined;
}
