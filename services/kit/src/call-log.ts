// One access line per gRPC call a process answers (method, caller, code, milliseconds, request
// id, and on the gateway's public listener the account and key id), as the gateway writes one per
// HTTP request; failures always, successes at the rate of ACCESS_LOG_SAMPLE. The call runs under
// the request id its caller sent (request-context.ts), so every line the handler writes carries
// it too; the gateway's public listener makes one for a caller that sent none.
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { ConfigError, envOptional, type Env } from "./config.ts";
import type { Logger } from "./logger.ts";
import { REQUEST_ID_HEADER, callerFields, usableRequestId, withRequestContext, type RequestContext } from "./request-context.ts";
import { CALLER_KEY } from "./access-policy.ts";

/** ACCESS_LOG_SAMPLE: the share of successful requests and calls given an access line (0 to 1; default 1, every one). */
export function accessLogSample(env: Env = process.env): number {
  const value = envOptional(env, "ACCESS_LOG_SAMPLE");
  if (value === undefined) return 1;
  const share = Number(value);
  if (!/^(0|1|0?\.\d+|1\.0*)$/.test(value) || !(share >= 0 && share <= 1)) throw new ConfigError("ACCESS_LOG_SAMPLE", `expected a share from 0 to 1 (e.g. 0.1), got "${value}"`);
  return share;
}

/** Whether a success gets its access line. */
export const sampled = (share: number) => share >= 1 || (share > 0 && Math.random() < share);

/**
 * The access log of a process's gRPC calls: each call runs under the request id its caller sent
 * (none: a probe, which runs without one), and its line names whom it acted for when the gateway's
 * gates noted it.
 */
export function callLog(logger: Logger, share: number): Interceptor {
  return (next) => (req) => {
    const id = usableRequestId(req.header.get(REQUEST_ID_HEADER));
    const work: RequestContext | undefined = id === undefined ? undefined : { id };
    const call = async () => {
      const started = performance.now();
      const line = (code: string) => ({
        method: `${req.service.typeName}/${req.method.name}`,
        caller: req.contextValues.get(CALLER_KEY),
        code,
        ms: Math.round((performance.now() - started) * 10) / 10,
        ...(work && callerFields(work)),
      });
      try {
        const res = await next(req);
        if (sampled(share)) logger.info("call", line("ok"));
        return res;
      } catch (error) {
        logger.info("call", line(Code[error instanceof ConnectError ? error.code : Code.Unknown]));
        throw error;
      }
    };
    return work ? withRequestContext(work, call) : call();
  };
}

/**
 * The gateway's public listener gives every call a request id, as it does every HTTP request: the
 * caller's usable `x-request-id`, else a new one put in the call's metadata for what follows (its
 * span, its access line, the services it calls). The id is answered in the `x-request-id` header,
 * or in the trailers of a refusal, for the caller to quote.
 */
export function answerRequestIds(): Interceptor {
  return (next) => async (req) => {
    let id = usableRequestId(req.header.get(REQUEST_ID_HEADER));
    if (id === undefined) req.header.set(REQUEST_ID_HEADER, (id = crypto.randomUUID()));
    try {
      const res = await next(req);
      res.header.set(REQUEST_ID_HEADER, id);
      return res;
    } catch (error) {
      const refusal = ConnectError.from(error);
      refusal.metadata.set(REQUEST_ID_HEADER, id);
      throw refusal;
    }
  };
}
