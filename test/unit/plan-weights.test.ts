// Plans' weights as accounts-billing announces them (kit/src/plan-weights.ts), on a real Redis
// under a prefix of this file's own: the worker slots' turns use an account's weight from its first
// article on, and a runner's remembered share takes a changed weight at once, not at its expiry.
import { expect, test } from "bun:test";
import IORedis from "ioredis";
import { FairDispatch } from "../../services/kit/src/fair-dispatch.ts";
import { announcePlanWeights, followPlanWeights, lineWeightsKey } from "../../services/kit/src/plan-weights.ts";
import { AccountShares } from "../../services/generation-runner/src/scheduler/account-shares.ts";
import { useGenerationLines } from "../harness/generation-lines.ts";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const redis = new IORedis(REDIS_URL);
const lines = useGenerationLines(redis, "weights");
const { entries } = lines;

test("the weights' hash accounts-billing writes is the one the turns read (the queue's own key)", () => {
  expect(lineWeightsKey(lines.prefix, false)).toBe(lines.queue.toKey("fair:weights"));
});

test("a new account's first articles take their turns at its announced weight, with no runner having asked its plan", async () => {
  const dispatch = new FairDispatch(redis, lines.queue);
  await announcePlanWeights(redis, lines.prefix, [{ account: "heavy", weight: 3 }]);
  await dispatch.enqueue(entries("heavy", 6));
  await dispatch.enqueue(entries("light", 6));
  await dispatch.feed(8);
  const taken = (await lines.queue.getWaiting()).map((job) => job.id!);
  expect(taken.filter((id) => id.startsWith("heavy-")).length).toBe(6);
  expect(taken.filter((id) => id.startsWith("light-")).length).toBe(2);
});

test("a runner's remembered share takes a plan's new weight as it is announced, well before the memory expires", async () => {
  const subscriber = new IORedis(REDIS_URL);
  let planWeight = 2;
  let asked = 0;
  const shares = new AccountShares(redis, lines.prefix, {
    async shareOf() {
      asked++;
      return { weight: planWeight };
    },
    wake: async () => true,
  });
  try {
    await followPlanWeights(subscriber, lines.prefix, (weights) => {
      for (const { account, weight } of weights) shares.planChanged(account, weight);
    });
    expect((await shares.share("7")).weight).toBe(2);
    expect((await shares.share("7")).weight).toBe(2);
    expect(asked).toBe(1);
    planWeight = 5;
    await announcePlanWeights(redis, lines.prefix, [{ account: "7", weight: 5 }]);
    const deadline = Date.now() + 5_000;
    while ((await shares.share("7")).weight !== 5 && Date.now() < deadline) await Bun.sleep(10);
    expect((await shares.share("7")).weight).toBe(5);
    // The turns read the same weight.
    expect(await redis.hget(lineWeightsKey(lines.prefix, false), "7")).toBe("5");
  } finally {
    shares.stop();
    subscriber.disconnect();
  }
});
