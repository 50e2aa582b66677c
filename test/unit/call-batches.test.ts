// How the dispatcher gathers what its deliveries in flight ask of other services: one call for
// the asks of one turn, the asks made meanwhile together in the next, an answer per ask, and an
// outage failing every ask of the call it hit (each delivery then waits without spending an attempt).
import { describe, expect, test } from "bun:test";
import { CallBatches } from "../../services/kit/src/call-batches.ts";

describe("CallBatches", () => {
  test("asks of one turn go in one call; asks made while it runs go together in the next", async () => {
    const calls: number[][] = [];
    const batches = new CallBatches<number, number>(async (inputs) => {
      calls.push(inputs);
      await Bun.sleep(20);
      return inputs.map((n) => n * 10);
    }, { maxSize: 100, maxRunning: 1 });
    const first = [1, 2, 3].map((n) => batches.ask(n));
    await Bun.sleep(5);
    const later = [4, 5].map((n) => batches.ask(n));
    expect(await Promise.all([...first, ...later])).toEqual([10, 20, 30, 40, 50]);
    expect(calls).toEqual([[1, 2, 3], [4, 5]]);
  });

  test("no call holds more than maxSize asks", async () => {
    const sizes: number[] = [];
    const batches = new CallBatches<number, number>(async (inputs) => (sizes.push(inputs.length), inputs), { maxSize: 2, maxRunning: 1 });
    await Promise.all([1, 2, 3, 4, 5].map((n) => batches.ask(n)));
    expect(sizes).toEqual([2, 2, 1]);
  });

  test("an Error answer fails its own ask only; a failed call fails every ask in it", async () => {
    let down = false;
    const batches = new CallBatches<number, number>(async (inputs) => {
      if (down) throw new Error("article-store unavailable");
      return inputs.map((n) => (n < 0 ? new Error(`refused ${n}`) : n));
    }, { maxSize: 10, maxRunning: 1 });
    const [ok, refused] = await Promise.allSettled([batches.ask(1), batches.ask(-1)]);
    expect(ok).toEqual({ status: "fulfilled", value: 1 });
    expect((refused as PromiseRejectedResult).reason.message).toBe("refused -1");

    down = true;
    const outage = await Promise.allSettled([batches.ask(2), batches.ask(3)]);
    expect(outage.map((r) => (r as PromiseRejectedResult).reason.message)).toEqual(["article-store unavailable", "article-store unavailable"]);
  });
});
