// An account's weight in the fair turns between accounts is its plan's share_weight, which
// accounts-billing owns; it says so whenever an account's weight changes (an account created on a
// plan, a subscription started or ended, a plan's share_weight updated). It writes the weight where
// the worker slots' turns read it (kit/src/fair-dispatch.ts), so an account's first article already
// takes its turns at its plan's weight, and announces it on a channel, so every runner's remembered
// share (the weight its provider budget claims carry) follows at once rather than at its expiry.
// A runner still writes the weight it reads on a miss, which restores a Redis that lost it.
import { queuePrefix, isCluster, redisKey, type RedisConnection } from "./redis.ts";

/** One account's weight as its plan now sets it. */
export interface PlanWeight {
  account: string;
  weight: number;
}

/**
 * The accounts' weights the turns read: the generation queue's own key prefix as BullMQ builds
 * it (queue.toKey("fair:weights")), without loading BullMQ in a process that has no queue.
 */
export const lineWeightsKey = (redisPrefix: string, clustered: boolean) => `${queuePrefix(redisPrefix, clustered)}:generation:fair:weights`;

export const planWeightsChannel = (redisPrefix: string) => redisKey(redisPrefix, "plan-weights");

/** Writes the accounts' weights for the turns and tells every runner. */
export async function announcePlanWeights(redis: RedisConnection, redisPrefix: string, weights: PlanWeight[]): Promise<void> {
  if (weights.length === 0) return;
  await redis.hset(lineWeightsKey(redisPrefix, isCluster(redis)), Object.fromEntries(weights.map(({ account, weight }) => [account, String(weight)])));
  await redis.publish(planWeightsChannel(redisPrefix), JSON.stringify(weights));
}

/** Calls `apply` with each announcement; `subscriber` is a connection in subscriber mode (it may listen to other channels too). */
export async function followPlanWeights(subscriber: RedisConnection, redisPrefix: string, apply: (weights: PlanWeight[]) => void): Promise<void> {
  const channel = planWeightsChannel(redisPrefix);
  subscriber.on("message", (from: string, message: string) => {
    if (from !== channel) return;
    try {
      apply(JSON.parse(message) as PlanWeight[]);
    } catch {
      // Not an announcement of this code's shape: nothing to apply.
    }
  });
  await subscriber.subscribe(channel);
}
