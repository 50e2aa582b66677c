// Workflow step bodies with mistakes of both kinds, a wrong JSON type (refused by the gateway) and a
// rule of the catalog (taken step number, reserved name, unknown variable): one 422 names them all,
// and nothing changes.
import { beforeAll, describe, expect, test } from "bun:test";
import { useStack, type TestStack } from "../harness/stack.ts";
import { stepBody, workflowTenant, type WorkflowTenant } from "./workflows-fixtures.ts";

let stack: TestStack;
let t: WorkflowTenant;
let stepId: number;
const RESERVED = "listicle";

beforeAll(async () => {
  stack = await useStack();
  t = await workflowTenant(stack);
  const created = await t.api.post(t.base, stepBody({ article_type: "faq_page", step_number: 1 }));
  expect(created.status).toBe(201);
  stepId = created.body.data.id;
});

async function catalogState() {
  const res = await t.api.get(t.base);
  expect(res.status).toBe(200);
  return res.body.data.map((w: any) => ({ slug: w.slug, revision: w.revision, steps: w.steps.map((s: any) => [s.id, s.step_number, s.step_name]) }));
}

describe("create step", () => {
  test("a wrong type and a taken step number are reported together", async () => {
    const before = await catalogState();
    const res = await t.api.post(t.base, stepBody({ step_name: 42, step_number: 1 }));
    expect(res.status).toBe(422);
    expect(res.body.errors.step_name).toEqual(["The step name field must be a string."]);
    expect(res.body.errors.step_number[0]).toContain("already taken");
    expect(Object.keys(res.body.errors).sort()).toEqual(["step_name", "step_number"]);
    expect(await catalogState()).toEqual(before);
  });

  test("a missing field, a reserved name and an unknown variable are reported together", async () => {
    const before = await catalogState();
    const body = stepBody({ article_type: RESERVED, user: "Write about {topic}." });
    delete body.system;
    const res = await t.api.post(t.base, body);
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({
      system: ["The system field is required."],
      article_type: ["custom workflows cannot use reserved global article type names"],
      user: ["The user prompt uses unknown template variable {topic}."],
    });
    expect(await catalogState()).toEqual(before);
  });

  test("a wrong type alone is still a 422 and creates nothing", async () => {
    const before = await catalogState();
    const res = await t.api.post(t.base, stepBody({ article_type: "fresh_type", step_number: 3, include_outline: "yes" }));
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({ include_outline: ["The include outline field must be true or false."] });
    expect(await catalogState()).toEqual(before);
    expect((await t.api.get(`${t.base}?article_type=fresh_type`)).body.data).toEqual([]);
  });
});

describe("update step", () => {
  test("a wrong type and a catalog rule are reported together, and the step is unchanged", async () => {
    const second = await t.api.post(t.base, stepBody({ step_number: 2, step_name: "Polish" }));
    expect(second.status).toBe(201);
    const before = await catalogState();
    for (const send of [t.api.patch, t.api.put]) {
      const res = await send(`${t.base}/${second.body.data.id}`, { step_number: 1, system: ["not", "a", "string"], step_icon: "i".repeat(51) });
      expect(res.status).toBe(422);
      expect(res.body.errors.system).toEqual(["The system field must be a string."]);
      expect(res.body.errors.step_number[0]).toContain("already taken");
      expect(res.body.errors.step_icon).toEqual(["The step icon field must not be greater than 50 characters."]);
      expect(Object.keys(res.body.errors).sort()).toEqual(["step_icon", "step_number", "system"]);
    }
    expect(await catalogState()).toEqual(before);
  });

  test("a step of another project is still 404 when the body is also wrong", async () => {
    const other = await workflowTenant(stack);
    const res = await other.api.patch(`${other.base}/${stepId}`, { step_name: 5 });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ message: "Workflow step not found." });
  });
});

describe("duplicate", () => {
  test("an unknown source and a reserved target are reported together", async () => {
    const res = await t.api.post(`${t.base}/duplicate`, { source_article_type: "no_such_type", new_article_type: RESERVED });
    expect(res.status).toBe(422);
    expect(res.body.errors.source_article_type[0]).toContain("no_such_type");
    expect(res.body.errors.new_article_type).toEqual(["custom workflows cannot use reserved global article type names"]);
  });

  test("an unknown source and an existing target are reported together", async () => {
    const before = await catalogState();
    const res = await t.api.post(`${t.base}/duplicate`, { source_article_type: "no_such_type", new_article_type: "faq_page" });
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors).sort()).toEqual(["new_article_type", "source_article_type"]);
    expect(res.body.errors.new_article_type[0]).toContain("already exists");
    expect(await catalogState()).toEqual(before);
  });
});

describe("lengths count characters", () => {
  test("an article_type of 255 and a step_icon of 50 emoji are accepted; one more is refused", async () => {
    const slug = "📝".repeat(255);
    const ok = await t.api.post(t.base, stepBody({ article_type: slug, step_icon: "🖋".repeat(50) }));
    expect(ok.status).toBe(201);
    expect(ok.body.data.article_type).toBe(slug);
    expect(ok.body.data.step_icon).toBe("🖋".repeat(50));
    const refused = await t.api.post(t.base, stepBody({ article_type: slug + "📝", step_icon: "🖋".repeat(51) }));
    expect(refused.status).toBe(422);
    expect(refused.body.errors).toEqual({
      article_type: ["The article type field must not be greater than 255 characters."],
      step_icon: ["The step icon field must not be greater than 50 characters."],
    });
  });
});
