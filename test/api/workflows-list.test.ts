// GET /v1/projects/{project}/workflows (spec 4.4): custom workflows only, ordered by slug, steps
// by step_number, paginated with integer meta, filterable by article_type.
import { beforeAll, describe, expect, test } from "bun:test";
import { useStack, type TestStack } from "../harness/stack.ts";
import { stepBody, WORKFLOW_FIELDS, workflowTenant, type WorkflowTenant } from "./workflows-fixtures.ts";

let stack: TestStack;
let t: WorkflowTenant;
const SLUGS = ["delta", "alpha", "charlie", "bravo", "echo"];

beforeAll(async () => {
  stack = await useStack();
  t = await workflowTenant(stack);
  for (const slug of SLUGS) {
    // Created out of order on purpose: the list must sort them.
    for (const n of [3, 1, 2]) await t.api.post(t.base, stepBody({ article_type: slug, step_number: n, step_name: `${slug} ${n}` }));
  }
});

describe("GET /v1/projects/{project}/workflows", () => {
  test("an empty project gives 200 with data [] and integer meta", async () => {
    const empty = await workflowTenant(stack);
    const res = await empty.api.get(empty.base);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, data: [], meta: { current_page: 1, last_page: 1, per_page: 20, total: 0 } });
  });

  test("workflows by slug with their steps by step_number, in the workflow shape", async () => {
    const res = await t.api.get(t.base);
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    expect(res.body.meta).toEqual({ current_page: 1, last_page: 1, per_page: 20, total: 5 });
    expect(res.body.data.map((w: any) => w.slug)).toEqual(["alpha", "bravo", "charlie", "delta", "echo"]);
    for (const workflow of res.body.data) {
      expect(Object.keys(workflow).sort()).toEqual([...WORKFLOW_FIELDS].sort());
      expect(workflow).toMatchObject({ project_id: t.projectId, is_custom: true, revision: 3, description: null });
      expect(typeof workflow.name).toBe("string");
      expect(workflow.steps.map((s: any) => s.step_number)).toEqual([1, 2, 3]);
      for (const step of workflow.steps) {
        expect(step).toMatchObject({ workflow_id: workflow.id, article_type: workflow.slug, is_custom: true, is_redacted: false });
      }
    }
  });

  test("pagination: per_page and page, last_page and total as integers", async () => {
    const first = await t.api.get(`${t.base}?per_page=2`);
    expect(first.body.meta).toEqual({ current_page: 1, last_page: 3, per_page: 2, total: 5 });
    expect(first.body.data.map((w: any) => w.slug)).toEqual(["alpha", "bravo"]);
    const last = await t.api.get(`${t.base}?per_page=2&page=3`);
    expect(last.body.meta).toEqual({ current_page: 3, last_page: 3, per_page: 2, total: 5 });
    expect(last.body.data.map((w: any) => w.slug)).toEqual(["echo"]);
    const beyond = await t.api.get(`${t.base}?per_page=2&page=9`);
    expect(beyond.status).toBe(200);
    expect(beyond.body.data).toEqual([]);
    expect(beyond.body.meta).toEqual({ current_page: 9, last_page: 3, per_page: 2, total: 5 });
    // Steps are never paginated.
    expect(first.body.data[0].steps).toHaveLength(3);
  });

  test("article_type restricts the list to that workflow", async () => {
    const res = await t.api.get(`${t.base}?article_type=charlie`);
    expect(res.body.data.map((w: any) => w.slug)).toEqual(["charlie"]);
    expect(res.body.meta.total).toBe(1);
    const none = await t.api.get(`${t.base}?article_type=zulu`);
    expect(none.status).toBe(200);
    expect(none.body.data).toEqual([]);
    // Built-in types are never listed, not even by name.
    const builtin = await t.api.get(`${t.base}?article_type=blog_post`);
    expect(builtin.body.data).toEqual([]);
  });
});
