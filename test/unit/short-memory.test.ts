// The gateway's half-second memory of keys and project access: answers are shared and bounded,
// expire inside the one-second promise, and failures are never remembered.
import { describe, expect, test } from "bun:test";
import { ShortMemory, SHORT_MEMORY_MS } from "../../gateway/src/plugins/short-memory.ts";

describe("ShortMemory", () => {
  test("remembers for at most half a second, well inside the one-second promise", async () => {
    expect(SHORT_MEMORY_MS).toBeLessThanOrEqual(500);
    const memory = new ShortMemory<number>(100);
    let lookups = 0;
    const lookup = async () => ++lookups;
    expect(await memory.get("user:1:project:2", lookup)).toBe(1);
    expect(await memory.get("user:1:project:2", lookup)).toBe(1);
    await Bun.sleep(120);
    expect(await memory.get("user:1:project:2", lookup)).toBe(2);
  });

  test("keeps each id apart, so one caller never gets another's answer", async () => {
    const memory = new ShortMemory<string>();
    expect(await memory.get("7:1:view", async () => "project of user 7")).toBe("project of user 7");
    expect(await memory.get("8:1:view", async () => "project of user 8")).toBe("project of user 8");
  });

  test("concurrent lookups of one id share a single call", async () => {
    const memory = new ShortMemory<number>();
    let lookups = 0;
    const slow = async () => {
      lookups++;
      await Bun.sleep(20);
      return 42;
    };
    const answers = await Promise.all(Array.from({ length: 10 }, () => memory.get("same", slow)));
    expect(answers).toEqual(Array(10).fill(42));
    expect(lookups).toBe(1);
  });

  test("a failed lookup is forgotten at once", async () => {
    const memory = new ShortMemory<number>();
    await expect(memory.get("x", async () => Promise.reject(new Error("unavailable")))).rejects.toThrow("unavailable");
    expect(await memory.get("x", async () => 5)).toBe(5);
  });

  test("stays bounded: past its size the oldest entries go", async () => {
    const memory = new ShortMemory<number>(60_000, 100);
    for (let i = 0; i < 1_000; i++) await memory.get(`id-${i}`, async () => i);
    expect((memory as unknown as { entries: Map<string, unknown> }).entries.size).toBeLessThanOrEqual(100);
    let asked = false;
    await memory.get("id-0", async () => ((asked = true), 0));
    expect(asked).toBe(true);
  });

  describe("refreshing ahead", () => {
    /** A lookup whose answers are counted and which takes `ms` to answer. */
    const counted = (ms: number) => {
      const lookup = async () => {
        lookup.calls++;
        await Bun.sleep(ms);
        if (lookup.failing) throw new Error("refused");
        return lookup.calls;
      };
      lookup.calls = 0;
      lookup.failing = false;
      return lookup;
    };

    test("an answer past its refresh age is served at once while one lookup replaces it", async () => {
      const memory = new ShortMemory<number>(1000, 10, 50);
      const lookup = counted(100);
      expect(await memory.get("m", lookup)).toBe(1);
      await Bun.sleep(60);
      // Past the refresh age: answered from memory (the old answer), not after the new lookup.
      const answers = await Promise.all(Array.from({ length: 5 }, () => memory.get("m", lookup)));
      expect(answers).toEqual([1, 1, 1, 1, 1]);
      expect(lookup.calls).toBe(2);
      // Once the refresh is in, it is the answer.
      await Bun.sleep(150);
      expect(await memory.get("m", lookup)).toBe(2);
    });

    test("never serves an answer older than the memory's limit, however it is asked", async () => {
      const memory = new ShortMemory<number>(100, 10, 50);
      const lookup = counted(0);
      expect(await memory.get("m", lookup)).toBe(1);
      await Bun.sleep(120);
      // Expired: looked up again and waited for, not served stale.
      expect(await memory.get("m", lookup)).toBe(2);
    });

    test("a refresh that fails forgets the answer, so the next request sees the refusal", async () => {
      const memory = new ShortMemory<number>(1000, 10, 20);
      const lookup = counted(0);
      expect(await memory.get("m", lookup)).toBe(1);
      await Bun.sleep(30);
      lookup.failing = true;
      expect(await memory.get("m", lookup)).toBe(1);
      await Bun.sleep(10);
      await expect(memory.get("m", lookup)).rejects.toThrow("refused");
    });
  });
});
