// Domain errors raised by service code, and the one table that maps them to Connect codes.
import { Code, ConnectError } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import { FieldViolationsSchema } from "../../../proto/gen/articles/common/v1/errors_pb.ts";

export type FieldErrors = Record<string, string[]>;

type DomainErrorKind = "not_found" | "forbidden" | "invalid" | "precondition" | "unauthenticated" | "conflict" | "stale";

export class DomainError extends Error {
  constructor(
    readonly kind: DomainErrorKind,
    message: string,
    readonly fields: FieldErrors = {},
  ) {
    super(message);
  }
}

export const notFound = (message: string) => new DomainError("not_found", message);
export const forbidden = (message: string) => new DomainError("forbidden", message);
export const unauthenticated = (message = "Unauthenticated.") => new DomainError("unauthenticated", message);
/** A business rule refused the request (e.g. quota exhausted); may still name fields. */
export const precondition = (message: string, fields: FieldErrors = {}) => new DomainError("precondition", message, fields);
export const conflict = (message: string) => new DomainError("conflict", message);
/** The change was based on a state that is no longer current (an edit of an older version): nothing changed. */
export const stale = (message: string) => new DomainError("stale", message);

/** Invalid input, reported field by field; the message summarises the first problem. */
export function invalidFields(fields: FieldErrors): DomainError {
  const first = Object.values(fields)[0]?.[0] ?? "The given data was invalid.";
  const others = Object.values(fields).reduce((n, m) => n + m.length, 0) - 1;
  const message = others > 0 ? `${first} (and ${others} more error${others > 1 ? "s" : ""})` : first;
  return new DomainError("invalid", message, fields);
}

/** Throws invalidFields(fields) when any field collected an error. */
export function throwIfAny(fields: FieldErrors): void {
  if (Object.keys(fields).length > 0) throw invalidFields(fields);
}

const CODE_OF_KIND: Record<DomainErrorKind, Code> = {
  not_found: Code.NotFound,
  forbidden: Code.PermissionDenied,
  invalid: Code.InvalidArgument,
  precondition: Code.FailedPrecondition,
  unauthenticated: Code.Unauthenticated,
  conflict: Code.AlreadyExists,
  stale: Code.Aborted,
};

export function toConnectError(error: DomainError): ConnectError {
  const violations = Object.entries(error.fields).map(([field, messages]) => ({ field, messages }));
  const details = violations.length ? [{ desc: FieldViolationsSchema, value: create(FieldViolationsSchema, { violations }) }] : [];
  return new ConnectError(error.message, CODE_OF_KIND[error.kind], undefined, details);
}

/** Reads the field violations carried by an error from another service. */
export function fieldErrorsOf(error: ConnectError): FieldErrors {
  const out: FieldErrors = {};
  for (const detail of error.findDetails(FieldViolationsSchema)) {
    for (const v of detail.violations) out[v.field] = [...(out[v.field] ?? []), ...v.messages];
  }
  return out;
}
