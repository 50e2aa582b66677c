// One access line per gRPC call a process answers (method, caller, code, milliseconds, request
// id, and on the gateway's public listener the account and key id), as the gateway writes one per
// HTTP request; failures always, successes at the rate of ACCESS_LOG_SAMPLE. The call runs under
// the request id its caller sent (request-context.ts), so every line the handler writes carries
// it too.
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
 * The access log of a process's gRPC calls. A service takes the id its caller sent and runs
 * without one when there is none (a probe); the gateway's public listener (`answerIds`) gives every
 * call an id, as it does every HTTP request, and answers it in the `x-request-id` header, or in the
 * trailers of a refusal, for the caller to quote.
 */
export function callLog(logger: Logger, share: number, opts: { answerIds?: boolean } = {}): Interceptor {
  return (next) => (req) => {
    const id = usableRequestId(req.header.get(REQUEST_ID_HEADER)) ?? (opts.answerIds ? crypto.randomUUID() : undefined);
    const work: RequestContext | undefined = id === undefined ? undefined : { id };
    const call = async () => {
      const started = performance.now();
      const line = (code: Code | "ok") => ({
        method: `${req.service.typeName}/${req.method.name}`,
        caller: req.contextValues.get(CALLER_KEY),
        code: code === "ok" ? code : Code[code],
        ms: Math.round((performance.now() - started) * 10) / 10,
        ...(work && callerFields(work)),
      });
      try {
        const res = await next(req);
        if (sampled(share)) logger.info("call", line("ok"));
        if (opts.answerIds) res.header.set(REQUEST_ID_HEADER, id!);
        return res;
      } catch (error) {
        const refusal = ConnectError.from(error);
        logger.info("call", line(refusal.code));
        if (!opts.answerIds) throw error;
        refusal.metadata.set(REQUEST_ID_HEADER, id!);
        throw refusal;
      }
    };
    return work ? withRequestContext(work, call) : call();
  };
}
