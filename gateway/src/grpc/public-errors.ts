// The public API's refusals as gRPC answers them, from the one place /v1 makes them (HttpError):
// the status /v1 would send picks the code, and the body's structure becomes Google's standard
// error details (google/rpc/error_details.proto), which grpc-gateway and googleapis' clients read.
import { create } from "@bufbuild/protobuf";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { BadRequestSchema, ErrorInfoSchema, RetryInfoSchema } from "../../../proto/gen/google/rpc/error_details_pb.ts";
import { fromServiceError, HttpError } from "../errors.ts";

const DOMAIN = "articles.api";

// What each /v1 status is in gRPC (422 is INVALID_ARGUMENT unless the word quota refused it).
const CODE_OF_STATUS: Record<number, Code> = {
  401: Code.Unauthenticated,
  402: Code.FailedPrecondition,
  403: Code.PermissionDenied,
  404: Code.NotFound,
  409: Code.Aborted,
  413: Code.InvalidArgument,
  422: Code.InvalidArgument,
  429: Code.ResourceExhausted,
  // A customer's site refused or failed (deleting its post on unpublish).
  502: Code.Unavailable,
  503: Code.Unavailable,
  504: Code.DeadlineExceeded,
};

/** A word quota shortfall: the message /v1 answers on target_word_count when the month's words run short. */
const QUOTA_SHORTFALL = /^Insufficient monthly word quota/;

function errorInfo(reason: string, metadata: Record<string, string> = {}) {
  return { desc: ErrorInfoSchema, value: create(ErrorInfoSchema, { reason, domain: DOMAIN, metadata }) };
}

/** The gRPC answer to what /v1 would answer with `error`. */
export function grpcErrorOf(error: HttpError): ConnectError {
  const body = error.body as { message?: string; code?: string; errors?: Record<string, string[]>; retry_after?: number };
  const message = String(body.message ?? "");
  const fields = body.errors ?? {};
  const violations = Object.entries(fields).flatMap(([field, messages]) => messages.map((description) => ({ field, description })));
  const details = [];
  let code = CODE_OF_STATUS[error.status] ?? Code.Internal;
  if (violations.length > 0) details.push({ desc: BadRequestSchema, value: create(BadRequestSchema, { fieldViolations: violations }) });
  if (error.status === 422 && Object.keys(fields).length === 1 && fields.target_word_count?.some((m) => QUOTA_SHORTFALL.test(m))) {
    code = Code.ResourceExhausted;
    details.push(errorInfo("WORD_QUOTA_EXCEEDED"));
  }
  if (body.code) details.push(errorInfo(body.code));
  if (error.status === 429 && typeof body.retry_after === "number") details.push({ desc: RetryInfoSchema, value: create(RetryInfoSchema, { retryDelay: durationFromMs(body.retry_after * 1000) }) });
  return new ConnectError(message, code, undefined, details);
}

/** Any failure of an operation as the public gRPC API answers it; `unexpected` is told of what is not a refusal. */
export function publicGrpcError(error: unknown, unexpected: (error: unknown) => void): ConnectError {
  if (error instanceof HttpError) return grpcErrorOf(error);
  if (error instanceof ConnectError) {
    // A service's own refusal is answered as /v1 answers it (its status, its fields).
    const mapped = fromServiceError(error);
    if (mapped.status >= 500) unexpected(error);
    return grpcErrorOf(mapped);
  }
  unexpected(error);
  return new ConnectError("Server Error", Code.Internal);
}
