// Failed sign-ins counted per client address and per email address in Redis, so every gateway
// replica shares the count: past a limit within the window, sign-in answers 429 whatever the
// password, until the window ends. Only failures count (a user signing in often is not slowed);
// the counters hold a SHA-256 of the email address, never the address. "Forgot password" and
// sign-up requests are counted the same way, under counters of their own.
import { createHash } from "node:crypto";
import { isRedisAway, redisKey, type RedisConnection } from "../../../services/kit/src/redis.ts";
import { unavailableError } from "../errors.ts";

/** Failed sign-ins of one email address allowed per window. */
export const FAILURES_PER_EMAIL = 10;
/** Failed sign-ins from one client address allowed per window. */
export const FAILURES_PER_ADDRESS = 50;
export const FAILURE_WINDOW_SECONDS = 15 * 60;

/** What one counter counts, and how many per email and per client address a window allows. */
export interface AttemptCounter {
  name: string;
  perEmail: number;
  perAddress: number;
}

export const SIGN_IN_FAILURES: AttemptCounter = { name: "sign-in-failures", perEmail: FAILURES_PER_EMAIL, perAddress: FAILURES_PER_ADDRESS };
/**
 * "Forgot password" requests, every one counted (each may send a mail): a few per address a
 * window, so nobody fills a stranger's mailbox, and more per client, as for sign-in.
 */
export const PASSWORD_RESET_REQUESTS: AttemptCounter = { name: "password-reset-requests", perEmail: 5, perAddress: FAILURES_PER_ADDRESS };
/** Sign-ups, every one counted: each may create an account and send a mail. */
export const SIGN_UP_REQUESTS: AttemptCounter = { name: "sign-up-requests", perEmail: 3, perAddress: 10 };

export class SignInLimits {
  constructor(
    private readonly redis: RedisConnection,
    private readonly prefix: string,
    private readonly counter: AttemptCounter = SIGN_IN_FAILURES,
  ) {}

  private keys(address: string, email: string): [string, string] {
    const digest = createHash("sha256").update(email.trim().toLowerCase()).digest("base64url");
    return [redisKey(this.prefix, this.counter.name, "address", address), redisKey(this.prefix, this.counter.name, "email", digest)];
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
      const full = [Number(a ?? 0) >= this.counter.perAddress ? byAddress : undefined, Number(e ?? 0) >= this.counter.perEmail ? byEmail : undefined].filter((k): k is string => !!k);
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
