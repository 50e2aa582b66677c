// The runner's memory of the model catalog: one read answers lookups for half a second at most,
// the next beginning at a quarter; lookups at once share it, the process's own changes drop it,
// failures are not remembered, and a catalog past the bound is not held.
import { describe, expect, test } from "bun:test";
import { CATALOG_MEMORY_MS, CatalogMemory } from "../../services/generation-runner/src/domain/catalog-memory.ts";

const model = (id: string, price = 1) => ({ id, price });

describe("CatalogMemory", () => {
  test("lookups within the memory time share one read, in the read's order", async () => {
    expect(CATALOG_MEMORY_MS).toBeLessThanOrEqual(1000);
    let reads = 0;
    const memory = new CatalogMemory(async () => (reads++, await Bun.sleep(5), [model("sim:cheap", 1), model("sim:dear", 9)]));
    const [a, b] = await Promise.all([memory.view(), memory.view()]);
    expect(a).toBe(b);
    expect(a!.cheapestFirst.map((m) => m.id)).toEqual(["sim:cheap", "sim:dear"]);
    expect(a!.byId.get("sim:dear")).toEqual(model("sim:dear", 9));
    await memory.view();
    expect(reads).toBe(1);
  });

  test("the next read begins once the last is a quarter of a second old, the last answering until it is in", async () => {
    let now = 0;
    let price = 1;
    let reads = 0;
    const memory = new CatalogMemory(async () => (reads++, [model("sim:a", price)]), 500, 1000, () => now, 250);
    expect((await memory.view())!.byId.get("sim:a")!.price).toBe(1);
    price = 2;
    now = 249;
    expect((await memory.view())!.byId.get("sim:a")!.price).toBe(1);
    expect(reads).toBe(1);
    now = 250;
    expect((await memory.view())!.byId.get("sim:a")!.price).toBe(1);
    await Bun.sleep(1); // the next read is in
    expect((await memory.view())!.byId.get("sim:a")!.price).toBe(2);
    expect(reads).toBe(2);
  });

  test("no lookup is answered from a read older than the memory time, counted from when it began: it waits for the next", async () => {
    let now = 0;
    let price = 1;
    let release = () => {};
    const memory = new CatalogMemory(
      async () => {
        if (price === 2) await new Promise<void>((resolve) => (release = resolve));
        return [model("sim:a", price)];
      },
      500,
      1000,
      () => now,
      250,
    );
    expect((await memory.view())!.byId.get("sim:a")!.price).toBe(1);
    price = 2;
    now = 300;
    // The next read is held back (a pool busy with the runs' writes): the last one answers.
    expect((await memory.view())!.byId.get("sim:a")!.price).toBe(1);
    now = 500;
    const waiting = memory.view();
    let answered = false;
    void waiting.then(() => (answered = true));
    await Bun.sleep(5);
    expect(answered).toBe(false);
    release();
    expect((await waiting)!.byId.get("sim:a")!.price).toBe(2);
  });

  test("forget drops the catalog at once (the process's own changes)", async () => {
    let price = 1;
    const memory = new CatalogMemory(async () => [model("sim:a", price)]);
    expect((await memory.view())!.byId.get("sim:a")!.price).toBe(1);
    price = 3;
    memory.forget();
    expect((await memory.view())!.byId.get("sim:a")!.price).toBe(3);
  });

  test("a failed read is not remembered", async () => {
    let calls = 0;
    const memory = new CatalogMemory(async () => {
      if (++calls === 1) throw new Error("database unavailable");
      return [model("sim:a")];
    });
    expect(memory.view()).rejects.toThrow("database unavailable");
    await Bun.sleep(1);
    expect((await memory.view())!.byId.has("sim:a")).toBe(true);
  });

  test("a catalog larger than the bound is not held: lookups go to the database", async () => {
    let asked = 0;
    const memory = new CatalogMemory(async (limit) => ((asked = limit), [model("a"), model("b"), model("c")]), 500, 2);
    expect(await memory.view()).toBeUndefined();
    expect(asked).toBe(3);
  });
});
