// A process that has grown and then gone quiet runs one full collection; one that is busy, or
// has not grown since its last collection, does not.
import { describe, expect, test } from "bun:test";
import { collectGarbageWhenQuiet } from "../../services/kit/src/quiet-collection.ts";

const MiB = 2 ** 20;

function fakeProcess() {
  const state = { rss: 100 * MiB, cpuMs: 0, busyMsPerCheck: 0, collections: 0, rssAfterCollection: 100 * MiB };
  const probes = {
    rss: () => state.rss,
    // Each check reads the CPU clock once before deciding: that read advances it by the check's work.
    cpuMs: () => (state.cpuMs += state.busyMsPerCheck / 2),
    collect: () => {
      state.collections++;
      state.rss = state.rssAfterCollection;
    },
    everyMs: 10,
  };
  return { state, probes };
}

/** Waits for what the watcher should do within a few of its checks (longer on a loaded machine). */
async function eventually(done: () => boolean, ms = 2000): Promise<void> {
  const until = performance.now() + ms;
  while (!done() && performance.now() < until) await Bun.sleep(5);
}

describe("collectGarbageWhenQuiet", () => {
  test("after growth, once quiet, one collection runs, and none again until it grows further", async () => {
    const { state, probes } = fakeProcess();
    const stop = collectGarbageWhenQuiet(probes);
    state.rss = 160 * MiB;
    await eventually(() => state.collections > 0);
    expect(state.collections).toBe(1);
    expect(state.rss).toBe(100 * MiB);
    state.rss = 110 * MiB; // less than 16 MiB over where the collection left it
    await Bun.sleep(60);
    expect(state.collections).toBe(1);
    state.rss = 130 * MiB;
    await eventually(() => state.collections > 1);
    expect(state.collections).toBe(2);
    stop();
  });

  test("a busy process is never collected, however much it has grown", async () => {
    const { state, probes } = fakeProcess();
    state.busyMsPerCheck = 100; // half the core at every check
    const stop = collectGarbageWhenQuiet(probes);
    state.rss = 300 * MiB;
    await Bun.sleep(100);
    expect(state.collections).toBe(0);
    // Work stops: the next quiet checks collect.
    state.busyMsPerCheck = 0;
    await eventually(() => state.collections > 0);
    expect(state.collections).toBe(1);
    stop();
  });

  test("a quiet process that has not grown is left alone", async () => {
    const { state, probes } = fakeProcess();
    const stop = collectGarbageWhenQuiet(probes);
    state.rss = 110 * MiB;
    await Bun.sleep(100);
    expect(state.collections).toBe(0);
    stop();
  });
});
