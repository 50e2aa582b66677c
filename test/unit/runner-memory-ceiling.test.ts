// The runner collects its garbage at once past the soft memory limit, and again only after it has
// grown further, so a process whose live data sits above the limit is not collected on every tick.
// The tests follow the checker's own ticks (each reads the memory size), never a guess of how many
// fit in a sleep: a loaded machine runs timers late.
import { describe, expect, test } from "bun:test";
import { collectGarbageAbove } from "../../services/generation-runner/src/memory-ceiling.ts";
import { eventually } from "../harness/eventually.ts";

const MiB = 2 ** 20;

/** A process whose memory size the test sets, counting how often the checker reads it. */
function fakeProcess(initialRss: number) {
  const state = { rss: initialRss, reads: 0, collections: 0 };
  return {
    state,
    rss: () => (state.reads++, state.rss),
    /** Resolves once the checker has read the size `ticks` more times than now. */
    ticksPass: (ticks: number) => {
      const target = state.reads + ticks;
      return eventually(async () => state.reads, (n) => n >= target, 5_000, `${ticks} more checks`);
    },
  };
}

describe("collectGarbageAbove", () => {
  test("below the limit nothing is collected; above it a collection runs", async () => {
    const p = fakeProcess(100 * MiB);
    const stop = collectGarbageAbove(150 * MiB, { rss: p.rss, collect: () => (p.state.collections++, (p.state.rss = 120 * MiB)), everyMs: 5 });
    try {
      await p.ticksPass(5);
      expect(p.state.collections).toBe(0);
      p.state.rss = 180 * MiB;
      await eventually(async () => p.state.collections, (n) => n >= 1, 5_000, "a collection past the limit");
      expect(p.state.rss).toBe(120 * MiB);
      // Back under the limit: later checks collect nothing more.
      await p.ticksPass(5);
      expect(p.state.collections).toBe(1);
    } finally {
      stop();
    }
  });

  test("when collecting does not bring it under the limit, the next collection waits for further growth", async () => {
    const p = fakeProcess(200 * MiB);
    const stop = collectGarbageAbove(150 * MiB, { rss: p.rss, collect: () => p.state.collections++, everyMs: 5 });
    try {
      await eventually(async () => p.state.collections, (n) => n >= 1, 5_000, "the first collection");
      // Still above the limit but not grown: checks go by without another collection.
      await p.ticksPass(5);
      expect(p.state.collections).toBe(1);
      p.state.rss = 240 * MiB;
      await eventually(async () => p.state.collections, (n) => n >= 2, 5_000, "a collection after further growth");
      await p.ticksPass(5);
      expect(p.state.collections).toBe(2);
    } finally {
      stop();
    }
  });
});
