// Articles parked on an open breaker are released when their model answers again; a release that
// fails (Redis away for a moment) is tried again at the watcher's next look, so the article does
// not wait out its park's five-minute safety.
import { afterAll, expect, test } from "bun:test";
import { CircuitBreakers } from "../../services/generation-runner/src/domain/circuit-breaker.ts";
import { OutageWaits, type ParkedOnOutage } from "../../services/generation-runner/src/scheduler/outage-waits.ts";
import { NO_LIMITS } from "../../services/generation-runner/src/scheduler/provider-capacity.ts";
import { connectRedis } from "../../services/kit/src/redis.ts";
import { eventually } from "../harness/eventually.ts";

const redis = connectRedis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
const prefix = `test-outage-waits-${crypto.randomUUID().slice(0, 8)}`;
afterAll(() => redis.disconnect());

const parkedOn = (model: string, article: string): ParkedOnOutage => ({
  targets: [{ id: model, limits: NO_LIMITS }],
  ticket: { account: "a", since: 1, tokens: 0, parking: { article, park: async () => { throw new Error("unused"); }, outageEnded: async () => {} } },
  probe: async () => true,
});

test("a release that fails is tried again at the watcher's next look", async () => {
  const releases: string[] = [];
  let failures = 1;
  const waits = new OutageWaits({
    // The model's breaker is closed: the watcher finds it back at its first look.
    breakers: new CircuitBreakers(redis, prefix),
    async release(_target, parked) {
      releases.push(parked.ticket.parking.article);
      if (failures-- > 0) throw new Error("Redis is away");
    },
  });
  waits.park(parkedOn(`model-${crypto.randomUUID()}`, "article-1"));
  await eventually(async () => releases, (r) => r.length === 2, 10_000, "the ticket released again");
  expect(releases).toEqual(["article-1", "article-1"]);
  // Released for good: no ticket left waiting.
  await eventually(async () => [...waits.parkedByModel().values()].reduce((a, b) => a + b, 0), (n) => n === 0, 5000, "no ticket left");
});
