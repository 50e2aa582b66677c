// The public error shapes of spec section 7, and the one table from Connect codes to HTTP.
import { Code, ConnectError } from "@connectrpc/connect";
import { fieldErrorsOf, type FieldErrors } from "../../services/kit/src/errors.ts";

/** An HTTP answer that is not a success: status, JSON body and extra headers. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: Record<string, unknown>,
    readonly headers: Record<string, string> = {},
  ) {
    super(String(body.message ?? status));
  }
}

/** Gate errors: `{error, message, code}` (401, 402, 429 on /v1). */
export const gateError = (status: number, error: string, message: string, code: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
  new HttpError(status, { error, message, code, ...extra }, headers);

export const unauthenticatedGate = () => gateError(401, "Unauthenticated", "Unauthenticated.", "UNAUTHENTICATED");
export const plainError = (status: number, message: string) => new HttpError(status, { message });
export const notFoundError = (message = "Not found.") => plainError(404, message);
/** 503: a dependency (Redis, a service, a service's database) did not answer. */
export const unavailableError = () => plainError(503, "A dependency is temporarily unavailable; retry with backoff.");

/** Validation errors: 422 `{message, errors: {field: [messages]}}`. */
export function validationError(errors: FieldErrors, message?: string): HttpError {
  const all = Object.values(errors).flat();
  const summary = message ?? (all.length > 1 ? `${all[0]} (and ${all.length - 1} more error${all.length > 2 ? "s" : ""})` : (all[0] ?? "The given data was invalid."));
  return new HttpError(422, { message: summary, errors });
}

const STATUS_OF_CODE: Partial<Record<Code, number>> = {
  [Code.NotFound]: 404,
  [Code.PermissionDenied]: 403,
  [Code.InvalidArgument]: 422,
  [Code.FailedPrecondition]: 422,
  [Code.AlreadyExists]: 422,
  // A change based on a version no longer current (articles' edits and restores).
  [Code.Aborted]: 409,
  [Code.Unauthenticated]: 401,
  [Code.ResourceExhausted]: 429,
  [Code.DeadlineExceeded]: 504,
  [Code.Unavailable]: 503,
};

/** A service's error as the public API answers it. */
export function fromServiceError(error: ConnectError): HttpError {
  const status = STATUS_OF_CODE[error.code] ?? 500;
  if (status === 422) {
    const errors = fieldErrorsOf(error);
    return Object.keys(errors).length ? validationError(errors, error.rawMessage) : new HttpError(422, { message: error.rawMessage, errors: {} });
  }
  if (status === 401) return plainError(401, "Unauthenticated.");
  if (status === 503) return unavailableError();
  if (status >= 500) return plainError(status, status === 500 ? "Server Error" : "A dependency is temporarily unavailable; retry with backoff.");
  return plainError(status, error.rawMessage);
}
