// Concurrent changes to one workflow (spec 2.3): one workflow per new type, no duplicate step
// numbers, no lost revision increments, no workflow left without steps, no 500s.
import { beforeAll, describe, expect, test } from "bun:test";
import { useStack, type TestStack } from "../harness/stack.ts";
import { snapshotClient } from "../harness/service-clients.ts";
import { stepBody, workflowTenant, type WorkflowTenant } from "./workflows-fixtures.ts";

let stack: TestStack;
beforeAll(async () => {
  stack = await useStack();
});

async function listAll(t: WorkflowTenant) {
  const res = await t.api.get(`${t.base}?per_page=100`);
  expect(res.status).toBe(200);
  return res.body.data as any[];
}

function expectNoOrphansOrDuplicates(workflows: any[]) {
  for (const w of workflows) {
    expect(w.steps.length).toBeGreaterThan(0);
    const numbers = w.steps.map((s: any) => s.step_number);
    expect(new Set(numbers).size).toBe(numbers.length);
  }
}

describe("races", () => {
  test("concurrent first steps of one new type: one workflow, every step, every revision", async () => {
    const t = await workflowTenant(stack);
    const count = 12;
    const results = await Promise.all(
      Array.from({ length: count }, (_, i) => t.api.post(t.base, stepBody({ article_type: "stampede", step_number: i + 1, step_name: `Step ${i + 1}` }))),
    );
    expect(results.map((r) => r.status)).toEqual(Array(count).fill(201));
    const workflowIds = new Set(results.map((r) => r.body.data.workflow_id));
    expect(workflowIds.size).toBe(1);

    const workflows = await listAll(t);
    expect(workflows).toHaveLength(1);
    expect(workflows[0].revision).toBe(count);
    expect(workflows[0].steps.map((s: any) => s.step_number)).toEqual(Array.from({ length: count }, (_, i) => i + 1));

    // Each revision's snapshot holds exactly one more step than the one before.
    const snapshots = snapshotClient(stack, "generation-runner");
    for (let revision = 1; revision <= count; revision++) {
      const { workflow } = await snapshots.getSnapshot({ workflowId: BigInt(workflows[0].id), revision });
      expect(workflow!.stepCount).toBe(revision);
    }
  });

  test("concurrent creates of the same step number: exactly one wins, the rest are 422 on step_number", async () => {
    const t = await workflowTenant(stack);
    const results = await Promise.all(Array.from({ length: 8 }, () => t.api.post(t.base, stepBody({ article_type: "contested", step_number: 1 }))));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 422, 422, 422, 422, 422, 422, 422]);
    for (const r of results.filter((r) => r.status === 422)) expect(Object.keys(r.body.errors)).toEqual(["step_number"]);
    const workflows = await listAll(t);
    expect(workflows).toHaveLength(1);
    expect(workflows[0].revision).toBe(1);
    expect(workflows[0].steps).toHaveLength(1);
  });

  test("concurrent reorders and edits of one workflow: all succeed, numbers stay unique, every revision counted", async () => {
    const t = await workflowTenant(stack);
    const ids: number[] = [];
    for (let n = 1; n <= 4; n++) ids.push((await t.api.post(t.base, stepBody({ article_type: "shuffled", step_number: n }))).body.data.id);
    const permutations = [
      [2, 1, 4, 3],
      [4, 3, 2, 1],
      [3, 4, 1, 2],
      [1, 3, 2, 4],
      [2, 3, 4, 1],
      [4, 1, 2, 3],
      [3, 1, 4, 2],
      [1, 2, 3, 4],
    ];
    const reorders = permutations.map((numbers) => t.api.post(`${t.base}/reorder`, { steps: ids.map((id, i) => ({ id, step_number: numbers[i] })) }));
    const edits = ids.map((id, i) => t.api.patch(`${t.base}/${id}`, { step_name: `Edited ${i}` }));
    const results = await Promise.all([...reorders, ...edits]);
    expect(results.map((r) => r.status)).toEqual(Array(results.length).fill(200));

    const [workflow] = await listAll(t);
    expect(workflow.revision).toBe(4 + permutations.length + ids.length);
    expect(workflow.steps.map((s: any) => s.step_number)).toEqual([1, 2, 3, 4]);
    expect(workflow.steps.map((s: any) => s.step_name).sort()).toEqual(["Edited 0", "Edited 1", "Edited 2", "Edited 3"]);
  });

  test("creating and deleting on one type at once never leaves a workflow without steps", async () => {
    const t = await workflowTenant(stack);
    for (let round = 0; round < 6; round++) {
      const only = (await t.api.post(t.base, stepBody({ article_type: "flicker", step_number: 1 }))).body.data;
      const [deleted, created] = await Promise.all([
        t.api.delete(`${t.base}/${only.id}`),
        t.api.post(t.base, stepBody({ article_type: "flicker", step_number: 2 })),
      ]);
      expect(deleted.status).toBe(200);
      expect(created.status).toBe(201);
      const workflows = await listAll(t);
      expectNoOrphansOrDuplicates(workflows);
      expect(workflows.map((w) => w.slug)).toEqual(["flicker"]);
      expect(workflows[0].steps.map((s: any) => s.id)).toEqual([created.body.data.id]);
      expect(created.body.data.workflow_id).toBe(workflows[0].id);
      await t.api.delete(`${t.base}/${created.body.data.id}`);
      expect(await listAll(t)).toEqual([]);
    }
  });

  test("crossing moves between two workflows complete without errors or orphans", async () => {
    const t = await workflowTenant(stack);
    const a = (await t.api.post(t.base, stepBody({ article_type: "left", step_number: 1 }))).body.data;
    const b = (await t.api.post(t.base, stepBody({ article_type: "right", step_number: 2 }))).body.data;
    const [toRight, toLeft] = await Promise.all([
      t.api.patch(`${t.base}/${a.id}`, { article_type: "right" }),
      t.api.patch(`${t.base}/${b.id}`, { article_type: "left" }),
    ]);
    expect([toRight.status, toLeft.status]).toEqual([200, 200]);
    const workflows = await listAll(t);
    expectNoOrphansOrDuplicates(workflows);
    const placement = Object.fromEntries(workflows.flatMap((w) => w.steps.map((s: any) => [s.id, w.slug])));
    expect(placement).toEqual({ [a.id]: "right", [b.id]: "left" });
  });

  test("concurrent duplicates into one new type: exactly one copy", async () => {
    const t = await workflowTenant(stack);
    const results = await Promise.all(
      Array.from({ length: 5 }, () => t.api.post(`${t.base}/duplicate`, { source_article_type: "news", new_article_type: "newsroom" })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([201, 422, 422, 422, 422]);
    const workflows = await listAll(t);
    expect(workflows).toHaveLength(1);
    expect(workflows[0].revision).toBe(1);
  });
});
