// POST /v1/projects/{project}/workflows/reorder (spec 4.9): atomic, all or nothing, one revision
// per reorder; a step of another project is 422 {success: false, message} and changes nothing.
import { beforeAll, describe, expect, test } from "bun:test";
import { useStack, type TestStack } from "../harness/stack.ts";
import { createProject } from "../harness/tenants.ts";
import { stepBody, workflowTenant, type WorkflowTenant } from "./workflows-fixtures.ts";

let stack: TestStack;
beforeAll(async () => {
  stack = await useStack();
});

/** A workflow of `type` with steps 1..count; returns the step ids in step order. */
async function steps(t: WorkflowTenant, type: string, count: number): Promise<number[]> {
  const ids: number[] = [];
  for (let n = 1; n <= count; n++) ids.push((await t.api.post(t.base, stepBody({ article_type: type, step_number: n, step_name: `Step ${n}` }))).body.data.id);
  return ids;
}

async function workflow(t: WorkflowTenant, type: string) {
  return (await t.api.get(`${t.base}?article_type=${type}`)).body.data[0];
}

const numbering = (w: any) => Object.fromEntries(w.steps.map((s: any) => [s.id, s.step_number]));

describe("POST /v1/projects/{project}/workflows/reorder", () => {
  test("swaps numbers atomically, keeps omitted steps and bumps the revision once", async () => {
    const t = await workflowTenant(stack);
    const [a, b, c] = await steps(t, "ordered", 3);
    const res = await t.api.post(`${t.base}/reorder`, { steps: [{ id: a, step_number: 2 }, { id: b, step_number: 1 }] });
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    expect(typeof res.body.message).toBe("string");
    expect(res.body.data).toBeUndefined();
    const after = await workflow(t, "ordered");
    expect(after.revision).toBe(4);
    expect(after.steps.map((s: any) => s.id)).toEqual([b, a, c]);
    expect(numbering(after)).toEqual({ [a]: 2, [b]: 1, [c]: 3 });
  });

  test("a rotation of every step and gaps in numbering are fine", async () => {
    const t = await workflowTenant(stack);
    const [a, b, c] = await steps(t, "rotated", 3);
    const res = await t.api.post(`${t.base}/reorder`, { steps: [{ id: a, step_number: 3 }, { id: b, step_number: 10 }, { id: c, step_number: 1 }] });
    expect(res.status).toBe(200);
    const after = await workflow(t, "rotated");
    expect(after.steps.map((s: any) => [s.id, s.step_number])).toEqual([[c, 1], [a, 3], [b, 10]]);
    expect(after.revision).toBe(4);
  });

  test("a step id of another project rejects the whole request and changes nothing", async () => {
    const t = await workflowTenant(stack);
    const [a, b] = await steps(t, "mine", 2);
    const stranger = await workflowTenant(stack);
    const [foreign] = await steps(stranger, "theirs", 1);
    const sibling = await createProject(stack, t.accountId, "Sibling project");
    const siblingStep = (await t.api.post(`/v1/projects/${sibling}/workflows`, stepBody({ article_type: "sibling" }))).body.data.id;

    for (const outsider of [foreign, siblingStep, 987654321]) {
      const res = await t.api.post(`${t.base}/reorder`, { steps: [{ id: a, step_number: 2 }, { id: b, step_number: 1 }, { id: outsider, step_number: 7 }] });
      expect(res.status).toBe(422);
      expect(res.body.success).toBe(false);
      expect(typeof res.body.message).toBe("string");
      expect(res.body.errors).toBeUndefined();
    }
    const after = await workflow(t, "mine");
    expect(after.revision).toBe(2);
    expect(numbering(after)).toEqual({ [a]: 1, [b]: 2 });
    expect((await workflow(stranger, "theirs")).steps[0].step_number).toBe(1);
  });

  test("numbers that would collide are 422 on the entry and nothing changes", async () => {
    const t = await workflowTenant(stack);
    const [a, b, c] = await steps(t, "colliding", 3);
    const withOmitted = await t.api.post(`${t.base}/reorder`, { steps: [{ id: a, step_number: 3 }] });
    expect(withOmitted.status).toBe(422);
    expect(Object.keys(withOmitted.body.errors)).toEqual(["steps.0.step_number"]);
    const withEachOther = await t.api.post(`${t.base}/reorder`, { steps: [{ id: a, step_number: 5 }, { id: b, step_number: 5 }] });
    expect(withEachOther.status).toBe(422);
    const after = await workflow(t, "colliding");
    expect(after.revision).toBe(3);
    expect(numbering(after)).toEqual({ [a]: 1, [b]: 2, [c]: 3 });
  });

  test("empty or malformed bodies are 422 with the errors map", async () => {
    const t = await workflowTenant(stack);
    const [a] = await steps(t, "malformed", 1);
    const cases: Array<[unknown, string[]]> = [
      [{}, ["steps"]],
      [{ steps: [] }, ["steps"]],
      [{ steps: "1,2" }, ["steps"]],
      [{ steps: [5] }, ["steps.0"]],
      [{ steps: [{ id: a }] }, ["steps.0.step_number"]],
      [{ steps: [{ step_number: 1 }] }, ["steps.0.id"]],
      [{ steps: [{ id: a, step_number: 0 }] }, ["steps.0.step_number"]],
      [{ steps: [{ id: "x", step_number: 1.5 }] }, ["steps.0.id", "steps.0.step_number"]],
      [{ steps: [{ id: a, step_number: 2 }, { id: a, step_number: 3 }] }, ["steps.1.id"]],
    ];
    for (const [body, fields] of cases) {
      const res = await t.api.post(`${t.base}/reorder`, body);
      expect(res.status).toBe(422);
      expect(typeof res.body.message).toBe("string");
      expect(Object.keys(res.body.errors).sort()).toEqual(fields.sort());
    }
    expect((await t.api.post(`${t.base}/reorder`, undefined, { rawBody: "{steps: [" })).status).toBe(422);
    expect((await workflow(t, "malformed")).revision).toBe(1);
  });

  test("steps of two workflows in one request: each workflow goes up one revision", async () => {
    const t = await workflowTenant(stack);
    const [x1, x2] = await steps(t, "first_flow", 2);
    const [y1] = await steps(t, "second_flow", 1);
    const res = await t.api.post(`${t.base}/reorder`, { steps: [{ id: x1, step_number: 2 }, { id: x2, step_number: 1 }, { id: y1, step_number: 4 }] });
    expect(res.status).toBe(200);
    expect((await workflow(t, "first_flow")).revision).toBe(3);
    const second = await workflow(t, "second_flow");
    expect(second.revision).toBe(2);
    expect(second.steps[0].step_number).toBe(4);
  });
});
