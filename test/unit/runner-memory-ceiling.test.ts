// The runner collects its garbage at once past the soft memory limit, and again only after it has
// grown further, so a process whose live data sits above the limit is not collected on every tick.
import { describe, expect, test } from "bun:test";
import { collectGarbageAbove } from "../../services/generation-runner/src/memory-ceiling.ts";

const MiB = 2 ** 20;

describe("collectGarbageAbove", () => {
  test("below the limit nothing is collected; above it a collection runs", async () => {
    let rss = 100 * MiB;
    let collections = 0;
    const stop = collectGarbageAbove(150 * MiB, { rss: () => rss, collect: () => (collections++, (rss = 120 * MiB)), everyMs: 5 });
    await Bun.sleep(30);
    expect(collections).toBe(0);
    rss = 180 * MiB;
    await Bun.sleep(30);
    expect(collections).toBe(1);
    expect(rss).toBe(120 * MiB);
    stop();
  });

  test("when collecting does not bring it under the limit, the next collection waits for further growth", async () => {
    let rss = 200 * MiB;
    let collections = 0;
    const stop = collectGarbageAbove(150 * MiB, { rss: () => rss, collect: () => collections++, everyMs: 5 });
    await Bun.sleep(40);
    expect(collections).toBe(1);
    rss = 240 * MiB;
    await Bun.sleep(30);
    expect(collections).toBe(2);
    stop();
  });
});
