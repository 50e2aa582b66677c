// What every method of the public gRPC API does around its operation: the /v1 gates for the
// caller (API key in the `authorization` metadata, subscription, the method's rate-limit bucket,
// whose RateLimit headers go out as response metadata), and refusals answered as gRPC codes with
// Google's error details.
import type { HandlerContext } from "@connectrpc/connect";
import type { Logger } from "../../../services/kit/src/logger.ts";
import { v1Caller, type Caller, type V1Gate } from "../plugins/caller.ts";
import { publicGrpcError } from "./public-errors.ts";

export interface PublicCalls {
  /** The caller of a call, through the gates of /v1 with `bucket`'s rate limit. */
  callerOf(bucket: string): (ctx: HandlerContext) => Promise<Caller>;
  /** Runs an operation, answering its refusals as gRPC codes with Google's error details. */
  answer<T>(method: string, run: () => Promise<T>): Promise<T>;
}

export function publicCalls(gate: V1Gate, logger: Logger): PublicCalls {
  return {
    callerOf: (bucket) => async (ctx) => {
      const { caller, headers } = await v1Caller(gate, ctx.requestHeader.get("authorization"), bucket);
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
