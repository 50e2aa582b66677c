// Failed sign-ins counted per client address and per email address in Redis, so every gateway
// replica shares the count: past a limit within the window, sign-in answers 429 whatever the
// password, until the window ends. Only failures count (a user signing in often is not slowed);
// the counters hold a SHA-256 of the email address, never the address.
import { createHash } from "node:crypto";
import { isRedisAway, redisKey, type RedisConnection } from "../../../services/kit/src/redis.ts";
import { unavailableError } from "../errors.ts";

/** Failed sign-ins of one email address allowed per window. */
export const FAILURES_PER_EMAIL = 10;
/** Failed sign-ins from one client address allowed per window. */
export const FAILURES_PER_ADDRESS = 50;
export const FAILURE_WINDOW_SECONDS = 15 * 60;

export class SignInLimits {
  constructor(
    private readonly redis: RedisConnection,
    private readonly prefix: string,
  ) {}

  private keys(address: string, email: string): [string, string] {
    const digest = createHash("sha256").update(email.trim().toLowerCase()).digest("base64url");
    return [redisKey(this.prefix, "sign-in-failures", "address", address), redisKey(this.prefix, "sign-in-failures", "email", digest)];
  }

  private async guarded<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (isRedisAway(error)) throw unavailableError();
      throw error;
    }
  }

  /** Seconds until another attempt is let in; 0 when one is now. */
  async retryAfter(address: string, email: string): Promise<number> {
    const [byAddress, byEmail] = this.keys(address, email);
    return this.guarded(async () => {
      const [a, e] = await Promise.all([this.redis.get(byAddress), this.redis.get(byEmail)]);
      const full = [Number(a ?? 0) >= FAILURES_PER_ADDRESS ? byAddress : undefined, Number(e ?? 0) >= FAILURES_PER_EMAIL ? byEmail : undefined].filter((k): k is string => !!k);
      if (!full.length) return 0;
      const ttls = await Promise.all(full.map((k) => this.redis.ttl(k)));
      return Math.max(1, ...ttls);
    });
  }

  async recordFailure(address: string, email: string): Promise<void> {
    await this.guarded(() =>
      Promise.all(
        this.keys(address, email).map(async (key) => {
          // The window starts with the first failure and is not lengthened by later ones.
          if ((await this.redis.incr(key)) === 1) await this.redis.expire(key, FAILURE_WINDOW_SECONDS);
        }),
      ),
    );
  }
}
