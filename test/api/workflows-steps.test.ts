// Creating, reading, updating and deleting custom workflow steps (spec 2.3, 2.4, 4.5–4.8).
import { beforeAll, describe, expect, test } from "bun:test";
import { useStack, type TestStack } from "../harness/stack.ts";
import { OUTLINE_SCHEMA, STEP_FIELDS, stepBody, workflowTenant, type WorkflowTenant } from "./workflows-fixtures.ts";

let stack: TestStack;
beforeAll(async () => {
  stack = await useStack();
});

async function workflowOf(t: WorkflowTenant, type: string) {
  const res = await t.api.get(`${t.base}?article_type=${encodeURIComponent(type)}`);
  expect(res.status).toBe(200);
  return res.body.data[0] as Record<string, any> | undefined;
}

describe("POST /v1/projects/{project}/workflows", () => {
  test("the first step of a new type creates the workflow and answers 201 with the step", async () => {
    const t = await workflowTenant(stack);
    const res = await t.api.post(t.base, stepBody({ article_type: "faq_page", step_description: "Writes the page", step_icon: "pen" }));
    expect(res.status).toBe(201);
    expect(res.body.success).toBe(true);
    expect(res.body.message).toBeUndefined();
    const step = res.body.data;
    expect(Object.keys(step).sort()).toEqual([...STEP_FIELDS].sort());
    expect(step).toMatchObject({
      project_id: t.projectId,
      article_type: "faq_page",
      step_number: 1,
      step_name: "Draft",
      step_description: "Writes the page",
      step_icon: "pen",
      system: "You are a careful writer.",
      user: "Write an article titled {title} in {language}.",
      output_format: "markdown",
      include_additional_context: false,
      include_additional_instruction: false,
      include_requirements: false,
      include_research: false,
      include_outline: false,
      json_schema: null,
      is_custom: true,
      is_redacted: false,
    });
    expect(Number.isInteger(step.id)).toBe(true);
    expect(Number.isInteger(step.timeout_seconds)).toBe(true);
    expect(step.timeout_seconds).toBeGreaterThanOrEqual(30);
    expect(step.timeout_seconds).toBeLessThanOrEqual(600);
    expect(step.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);

    const workflow = await workflowOf(t, "faq_page");
    expect(workflow).toMatchObject({ id: step.workflow_id, project_id: t.projectId, slug: "faq_page", revision: 1, is_custom: true });
    expect(workflow!.steps.map((s: any) => s.id)).toEqual([step.id]);
  });

  test("further steps join the workflow and bump its revision; every field round-trips", async () => {
    const t = await workflowTenant(stack);
    const first = await t.api.post(t.base, stepBody());
    const second = await t.api.post(
      t.base,
      stepBody({
        step_number: 2,
        step_name: "Outline",
        output_format: "json",
        json_schema: OUTLINE_SCHEMA,
        timeout_seconds: 45,
        include_additional_context: true,
        include_additional_instruction: true,
        include_requirements: true,
        include_research: true,
        include_outline: true,
        user: "Plan {title} from {step_1_output}. {research} {outline} {requirements} {additional_context} {additional_instruction}",
      }),
    );
    expect(second.status).toBe(201);
    expect(second.body.message).toBeUndefined();
    expect(second.body.data).toMatchObject({
      workflow_id: first.body.data.workflow_id,
      step_number: 2,
      output_format: "json",
      json_schema: OUTLINE_SCHEMA,
      timeout_seconds: 45,
      include_additional_context: true,
      include_additional_instruction: true,
      include_requirements: true,
      include_research: true,
      include_outline: true,
    });
    const workflow = await workflowOf(t, "faq_page");
    expect(workflow!.revision).toBe(2);
    expect(workflow!.steps.map((s: any) => s.step_number)).toEqual([1, 2]);
  });

  test("a {step_N_output} of a step that does not run earlier is accepted with a warning message", async () => {
    const t = await workflowTenant(stack);
    const res = await t.api.post(t.base, stepBody({ step_number: 2, user: "Improve {step_2_output} and {step_5_output}; keep {step_1_output}." }));
    expect(res.status).toBe(201);
    expect(res.body.success).toBe(true);
    expect(typeof res.body.message).toBe("string");
    expect(res.body.message).toContain("{step_2_output}");
    expect(res.body.message).toContain("{step_5_output}");
    expect(res.body.message).not.toContain("{step_1_output}");
    expect(res.body.data.user).toBe("Improve {step_2_output} and {step_5_output}; keep {step_1_output}.");
  });
});

describe("GET /v1/projects/{project}/workflows/{workflow}", () => {
  test("returns the step with its prompts", async () => {
    const t = await workflowTenant(stack);
    const created = await t.api.post(t.base, stepBody({ system: "Be exact.", user: "Explain {title}." }));
    const res = await t.api.get(`${t.base}/${created.body.data.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, data: created.body.data });
  });

  test("404 with a message for an unknown step", async () => {
    const t = await workflowTenant(stack);
    const res = await t.api.get(`${t.base}/999999999`);
    expect(res.status).toBe(404);
    expect(Object.keys(res.body)).toEqual(["message"]);
  });
});

describe("PATCH and PUT /v1/projects/{project}/workflows/{workflow}", () => {
  for (const verb of ["patch", "put"] as const) {
    test(`${verb.toUpperCase()} changes only the fields sent and bumps the revision`, async () => {
      const t = await workflowTenant(stack);
      const created = (await t.api.post(t.base, stepBody({ step_icon: "pen", step_description: "note" }))).body.data;
      const res = await t.api[verb](`${t.base}/${created.id}`, { step_name: "Renamed", include_requirements: true, user: "Write {title}. {requirements}" });
      expect(res.status).toBe(200);
      expect(res.body.success).toBe(true);
      expect(res.body.data).toMatchObject({
        id: created.id,
        step_name: "Renamed",
        include_requirements: true,
        user: "Write {title}. {requirements}",
        system: created.system,
        step_icon: "pen",
        step_description: "note",
        step_number: 1,
        output_format: "markdown",
        created_at: created.created_at,
      });
      expect((await workflowOf(t, "faq_page"))!.revision).toBe(2);
      expect((await t.api.get(`${t.base}/${created.id}`)).body.data).toEqual(res.body.data);
    });
  }

  test("step_description, timeout_seconds and include_outline are accepted on update; null clears nullable fields", async () => {
    const t = await workflowTenant(stack);
    const created = (await t.api.post(t.base, stepBody({ step_icon: "pen", step_description: "old" }))).body.data;
    const res = await t.api.patch(`${t.base}/${created.id}`, { step_description: "new note", timeout_seconds: 90, include_outline: true, user: "Use {outline}." });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ step_description: "new note", timeout_seconds: 90, include_outline: true });
    const cleared = await t.api.put(`${t.base}/${created.id}`, { step_description: null, step_icon: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body.data).toMatchObject({ step_description: null, step_icon: null, timeout_seconds: 90 });
  });

  test("json_schema can be set, replaced and cleared; leaving output_format json keeps it for a return to json", async () => {
    const t = await workflowTenant(stack);
    const created = (await t.api.post(t.base, stepBody({ output_format: "json", json_schema: OUTLINE_SCHEMA }))).body.data;
    const replacement = { type: "object", properties: { answer: { type: "string" } }, required: ["answer"], additionalProperties: false };
    expect((await t.api.patch(`${t.base}/${created.id}`, { json_schema: replacement })).body.data.json_schema).toEqual(replacement);
    expect((await t.api.patch(`${t.base}/${created.id}`, { json_schema: null })).body.data.json_schema).toBeNull();
    await t.api.patch(`${t.base}/${created.id}`, { json_schema: replacement });
    const text = await t.api.patch(`${t.base}/${created.id}`, { output_format: "text" });
    expect(text.status).toBe(200);
    expect(text.body.data).toMatchObject({ output_format: "text", json_schema: replacement });
    // Naming a schema for a step that is not json is still refused.
    const named = await t.api.patch(`${t.base}/${created.id}`, { json_schema: OUTLINE_SCHEMA });
    expect(named.status).toBe(422);
    expect(Object.keys(named.body.errors)).toEqual(["json_schema"]);
    const back = await t.api.patch(`${t.base}/${created.id}`, { output_format: "json" });
    expect(back.body.data).toMatchObject({ output_format: "json", json_schema: replacement });
  });

  test("an empty body changes nothing and is answered with the step as it was", async () => {
    const t = await workflowTenant(stack);
    const created = (await t.api.post(t.base, stepBody())).body.data;
    const res = await t.api.patch(`${t.base}/${created.id}`, {});
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual(created);
  });

  test("moving a step to a new type creates the target and deletes the emptied source", async () => {
    const t = await workflowTenant(stack);
    const created = (await t.api.post(t.base, stepBody({ article_type: "source_type" }))).body.data;
    const res = await t.api.patch(`${t.base}/${created.id}`, { article_type: "target_type" });
    expect(res.status).toBe(200);
    expect(res.body.data.article_type).toBe("target_type");
    expect(res.body.data.workflow_id).not.toBe(created.workflow_id);
    expect(await workflowOf(t, "source_type")).toBeUndefined();
    const target = await workflowOf(t, "target_type");
    expect(target).toMatchObject({ id: res.body.data.workflow_id, revision: 1 });
    expect(target!.steps.map((s: any) => s.id)).toEqual([created.id]);
  });

  test("moving into an existing type keeps the source when it still has steps; numbers must not collide", async () => {
    const t = await workflowTenant(stack);
    const a1 = (await t.api.post(t.base, stepBody({ article_type: "alpha", step_number: 1 }))).body.data;
    const a2 = (await t.api.post(t.base, stepBody({ article_type: "alpha", step_number: 2 }))).body.data;
    await t.api.post(t.base, stepBody({ article_type: "beta", step_number: 1 }));

    const clash = await t.api.patch(`${t.base}/${a1.id}`, { article_type: "beta" });
    expect(clash.status).toBe(422);
    expect(Object.keys(clash.body.errors)).toEqual(["step_number"]);

    const moved = await t.api.patch(`${t.base}/${a2.id}`, { article_type: "beta" });
    expect(moved.status).toBe(200);
    const alpha = await workflowOf(t, "alpha");
    const beta = await workflowOf(t, "beta");
    expect(alpha!.steps.map((s: any) => s.id)).toEqual([a1.id]);
    expect(alpha!.revision).toBe(3);
    expect(beta!.steps.map((s: any) => s.step_number)).toEqual([1, 2]);
    expect(beta!.revision).toBe(2);
  });
});

describe("DELETE /v1/projects/{project}/workflows/{workflow}", () => {
  test("numbering is not closed up and the revision goes up", async () => {
    const t = await workflowTenant(stack);
    const ids: number[] = [];
    for (const n of [1, 2, 3, 4]) ids.push((await t.api.post(t.base, stepBody({ step_number: n }))).body.data.id);
    const res = await t.api.delete(`${t.base}/${ids[1]}`);
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    expect(typeof res.body.message).toBe("string");
    expect(res.body.data).toBeUndefined();
    const workflow = await workflowOf(t, "faq_page");
    expect(workflow!.steps.map((s: any) => s.step_number)).toEqual([1, 3, 4]);
    expect(workflow!.revision).toBe(5);
    expect((await t.api.get(`${t.base}/${ids[1]}`)).status).toBe(404);
  });

  test("deleting the last step deletes the workflow; the type can start afresh", async () => {
    const t = await workflowTenant(stack);
    const only = (await t.api.post(t.base, stepBody())).body.data;
    expect((await t.api.delete(`${t.base}/${only.id}`)).status).toBe(200);
    expect(await workflowOf(t, "faq_page")).toBeUndefined();
    expect((await t.api.delete(`${t.base}/${only.id}`)).status).toBe(404);
    const again = (await t.api.post(t.base, stepBody())).body.data;
    const workflow = await workflowOf(t, "faq_page");
    expect(workflow).toMatchObject({ id: again.workflow_id, revision: 1 });
    expect(again.workflow_id).not.toBe(only.workflow_id);
  });
});
