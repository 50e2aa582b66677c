// The runner's memory of pinned snapshots: one fetch per revision while remembered, revisions kept
// apart, failures not remembered, and a bounded number of entries.
import { describe, expect, test } from "bun:test";
import { PinnedSnapshotMemory, SNAPSHOT_MEMORY_MS, type PinnedRevision } from "../../services/generation-runner/src/domain/pinned-snapshots.ts";

const pin = (revision: number, workflowId = 7n): PinnedRevision => ({ workflowId, revision, articleType: "how_to" });

describe("PinnedSnapshotMemory", () => {
  test("articles pinned to one revision share one fetch, even when they ask at once", async () => {
    let fetches = 0;
    const memory = new PinnedSnapshotMemory(async (p) => (fetches++, await Bun.sleep(5), `steps of revision ${p.revision}`));
    const answers = await Promise.all([memory.get(pin(3)), memory.get(pin(3)), memory.get(pin(3))]);
    expect(answers).toEqual(["steps of revision 3", "steps of revision 3", "steps of revision 3"]);
    expect(await memory.get(pin(3))).toBe("steps of revision 3");
    expect(fetches).toBe(1);
  });

  test("another revision or workflow is fetched on its own", async () => {
    const memory = new PinnedSnapshotMemory(async (p) => `${p.workflowId}:${p.revision}`);
    expect(await memory.get(pin(3))).toBe("7:3");
    expect(await memory.get(pin(4))).toBe("7:4");
    expect(await memory.get(pin(3, 8n))).toBe("8:3");
  });

  test("a failed fetch is not remembered", async () => {
    let calls = 0;
    const memory = new PinnedSnapshotMemory(async () => {
      if (++calls === 1) throw new Error("workflow-catalog unavailable");
      return "steps";
    });
    expect(memory.get(pin(1))).rejects.toThrow("workflow-catalog unavailable");
    await Bun.sleep(1);
    expect(await memory.get(pin(1))).toBe("steps");
  });

  test("entries lapse after the memory time and the oldest go past the bound", async () => {
    expect(SNAPSHOT_MEMORY_MS).toBeLessThanOrEqual(60_000);
    let fetches = 0;
    const memory = new PinnedSnapshotMemory(async (p) => (fetches++, p.revision), 30, 2);
    await memory.get(pin(1));
    await Bun.sleep(40);
    await memory.get(pin(1));
    expect(fetches).toBe(2);
    // Two fit: the third pushes the least recently used (revision 1) out.
    await memory.get(pin(2));
    await memory.get(pin(3));
    expect(fetches).toBe(4);
    await memory.get(pin(1));
    expect(fetches).toBe(5);
    await memory.get(pin(3));
    expect(fetches).toBe(5);
  });
});
