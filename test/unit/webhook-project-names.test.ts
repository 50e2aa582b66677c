// The dispatcher's short memory of project names: a burst of completions of one project asks
// accounts-billing once, projects are kept apart, and a failed lookup is not remembered.
import { describe, expect, test } from "bun:test";
import { PROJECT_NAME_MEMORY_MS, ProjectNames } from "../../services/webhook-dispatcher/src/domain/project-names.ts";

describe("ProjectNames", () => {
  test("one lookup per project while remembered, shared by concurrent deliveries", async () => {
    let lookups = 0;
    const names = new ProjectNames(async (id) => (lookups++, await Bun.sleep(5), `Project ${id}`));
    expect(await Promise.all([names.nameOf(1n), names.nameOf(1n), names.nameOf(2n)])).toEqual(["Project 1", "Project 1", "Project 2"]);
    expect(await names.nameOf(1n)).toBe("Project 1");
    expect(lookups).toBe(2);
  });

  test("a rename shows once the memory lapses", async () => {
    expect(PROJECT_NAME_MEMORY_MS).toBeLessThanOrEqual(5_000);
    let name = "Blog";
    const names = new ProjectNames(async () => name, 20);
    expect(await names.nameOf(1n)).toBe("Blog");
    name = "Journal";
    await Bun.sleep(30);
    expect(await names.nameOf(1n)).toBe("Journal");
  });

  test("a failed lookup is not remembered", async () => {
    let calls = 0;
    const names = new ProjectNames(async () => {
      if (++calls === 1) throw new Error("accounts-billing unavailable");
      return "Blog";
    });
    expect(names.nameOf(1n)).rejects.toThrow("accounts-billing unavailable");
    await Bun.sleep(1);
    expect(await names.nameOf(1n)).toBe("Blog");
  });
});
