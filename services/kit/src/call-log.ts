// One access line per gRPC call a service answers (method, caller, code, milliseconds, request
// id), as the gateway writes one per HTTP request; failures always, successes at the rate of
// ACCESS_LOG_SAMPLE. The call runs under the request id its caller sent (request-context.ts), so
// every line the handler writes carries it too.
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { ConfigError, envOptional, type Env } from "./config.ts";
import type { Logger } from "./logger.ts";
import { REQUEST_ID_HEADER, usableRequestId, withRequestId } from "./request-context.ts";
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

export function callLog(logger: Logger, share: number): Interceptor {
  return (next) => (req) =>
    withRequestId(usableRequestId(req.header.get(REQUEST_ID_HEADER)), async () => {
      const started = performance.now();
      const line = (code: string) => ({ method: `${req.service.typeName}/${req.method.name}`, caller: req.contextValues.get(CALLER_KEY), code, ms: Math.round((performance.now() - started) * 10) / 10 });
      try {
        const res = await next(req);
        if (sampled(share)) logger.info("call", line("ok"));
        return res;
      } catch (error) {
        logger.info("call", line(Code[error instanceof ConnectError ? error.code : Code.Unknown]));
        throw error;
      }
    });
}
