// POST /v1/projects/{project}/workflows/duplicate (spec 4.10): custom sources copied verbatim,
// built-in sources with generic starter prompts (their own prompts never leave the service),
// structure, formats, timeouts, flags and schemas always, and the copy is live at once.
import { beforeAll, describe, expect, test } from "bun:test";
import { useStack, type TestStack } from "../harness/stack.ts";
import { BUILTIN_ARTICLE_TYPES, builtinWorkflow } from "../../services/workflow-catalog/src/domain/builtin-workflows/index.ts";
import { snapshotClient } from "../harness/service-clients.ts";
import { OUTLINE_SCHEMA, stepBody, WORKFLOW_FIELDS, workflowTenant } from "./workflows-fixtures.ts";

let stack: TestStack;
beforeAll(async () => {
  stack = await useStack();
});

// Sentences long enough that sharing one could not be a coincidence of phrasing.
function sentences(text: string): string[] {
  return text
    .split(/(?<=[.!?:])\s+|\n+/)
    .map((s) => s.trim().replace(/\s+/g, " "))
    .filter((s) => s.split(" ").length >= 5);
}

const BUILTIN_SENTENCES = new Set(
  BUILTIN_ARTICLE_TYPES.flatMap((type) => builtinWorkflow(type)!.steps.flatMap((s) => [...sentences(s.system), ...sentences(s.user)])),
);

function expectNoBuiltinPrompt(text: string) {
  for (const sentence of BUILTIN_SENTENCES) expect(text.includes(sentence)).toBe(false);
  for (const sentence of sentences(text)) expect(BUILTIN_SENTENCES.has(sentence)).toBe(false);
}

describe("duplicating a built-in", () => {
  test("every built-in copies its structure with starter prompts that share no sentence with its own", async () => {
    const t = await workflowTenant(stack);
    for (const type of BUILTIN_ARTICLE_TYPES) {
      const builtin = builtinWorkflow(type)!;
      const res = await t.api.post(`${t.base}/duplicate`, { source_article_type: type, new_article_type: `my_${type}` });
      expect(res.status).toBe(201);
      expect(res.body.success).toBe(true);
      const copy = res.body.data;
      expect(Object.keys(copy).sort()).toEqual([...WORKFLOW_FIELDS].sort());
      expect(copy).toMatchObject({ slug: `my_${type}`, project_id: t.projectId, revision: 1, is_custom: true });
      expect(copy.steps).toHaveLength(builtin.steps.length);
      copy.steps.forEach((step: any, i: number) => {
        const original = builtin.steps[i];
        expect(step).toMatchObject({
          workflow_id: copy.id,
          article_type: `my_${type}`,
          step_number: original.step_number,
          step_name: original.step_name,
          output_format: original.output_format,
          timeout_seconds: original.timeout_seconds,
          include_additional_context: original.include_additional_context,
          include_additional_instruction: original.include_additional_instruction,
          include_requirements: original.include_requirements,
          include_research: original.include_research,
          include_outline: original.include_outline,
          json_schema: original.json_schema,
          is_custom: true,
          is_redacted: false,
        });
        expect(step.system).not.toBe(original.system);
        expect(step.user).not.toBe(original.user);
        expect(step.system.length).toBeGreaterThan(0);
        expect(step.user.length).toBeGreaterThan(0);
      });
      expectNoBuiltinPrompt(JSON.stringify(copy).replace(/\\n/g, "\n"));
    }
    // Nor does any read of the copies show them.
    const list = await t.api.get(`${t.base}?per_page=100`);
    expect(list.body.meta.total).toBe(BUILTIN_ARTICLE_TYPES.length);
    expectNoBuiltinPrompt(JSON.stringify(list.body).replace(/\\n/g, "\n"));
  });

  test("the copy is live at once: it resolves for articles and can be edited like any custom workflow", async () => {
    const t = await workflowTenant(stack);
    const copy = (await t.api.post(`${t.base}/duplicate`, { source_article_type: "listicle", new_article_type: "top_lists" })).body.data;
    const { workflow } = await snapshotClient(stack).resolveArticleType({ projectId: BigInt(t.projectId), articleType: "top_lists" });
    expect(workflow).toMatchObject({ workflowId: BigInt(copy.id), revision: 1, builtin: false, stepCount: copy.steps.length, hasResearchStep: true });
    const edited = await t.api.patch(`${t.base}/${copy.steps[0].id}`, { step_name: "Gather sources" });
    expect(edited.status).toBe(200);
  });
});

describe("duplicating a custom workflow", () => {
  test("copies every step verbatim into the new type, leaving the source alone", async () => {
    const t = await workflowTenant(stack);
    const source = [
      stepBody({ article_type: "house_style", step_number: 1, step_name: "Research", include_research: true, user: "Notes on {title}: {research}", timeout_seconds: 120, step_icon: "search", step_description: "Collects facts" }),
      stepBody({ article_type: "house_style", step_number: 3, step_name: "Plan", output_format: "json", json_schema: OUTLINE_SCHEMA, user: "Plan {title} from {step_1_output}", include_requirements: true }),
      stepBody({ article_type: "house_style", step_number: 7, step_name: "Write", user: "Write {title} following {step_3_output}. {additional_instruction}", include_additional_instruction: true, timeout_seconds: 600 }),
    ];
    const created: any[] = [];
    for (const body of source) created.push((await t.api.post(t.base, body)).body.data);

    const res = await t.api.post(`${t.base}/duplicate`, { source_article_type: "house_style", new_article_type: "house_style_v2" });
    expect(res.status).toBe(201);
    const copy = res.body.data;
    expect(copy.slug).toBe("house_style_v2");
    expect(copy.revision).toBe(1);
    const own = (s: any) => {
      const { id, workflow_id, article_type, created_at, updated_at, ...rest } = s;
      return rest;
    };
    expect(copy.steps.map(own)).toEqual(created.map(own));
    expect(copy.steps.every((s: any) => s.workflow_id === copy.id && s.article_type === "house_style_v2")).toBe(true);
    expect(copy.steps.map((s: any) => s.id).some((id: number) => created.some((c) => c.id === id))).toBe(false);

    const list = (await t.api.get(t.base)).body.data;
    expect(list.map((w: any) => [w.slug, w.revision, w.steps.length])).toEqual([
      ["house_style", 3, 3],
      ["house_style_v2", 1, 3],
    ]);
  });
});

describe("duplicate errors", () => {
  test("a source that is neither custom nor built-in, a reserved or existing target, missing fields: 422", async () => {
    const t = await workflowTenant(stack);
    await t.api.post(t.base, stepBody({ article_type: "existing" }));
    const stranger = await workflowTenant(stack);
    await stranger.api.post(stranger.base, stepBody({ article_type: "their_type" }));

    const cases: Array<[Record<string, unknown>, string[]]> = [
      [{ source_article_type: "nowhere", new_article_type: "fresh" }, ["source_article_type"]],
      [{ source_article_type: "their_type", new_article_type: "fresh" }, ["source_article_type"]],
      [{ source_article_type: "existing", new_article_type: "blog_post" }, ["new_article_type"]],
      [{ source_article_type: "blog_post", new_article_type: "Case_Study" }, ["new_article_type"]],
      [{ source_article_type: "blog_post", new_article_type: "existing" }, ["new_article_type"]],
      [{ source_article_type: "existing", new_article_type: "existing" }, ["new_article_type"]],
      [{ source_article_type: "nowhere", new_article_type: "existing" }, ["source_article_type", "new_article_type"]],
      [{ source_article_type: "existing", new_article_type: "x".repeat(256) }, ["new_article_type"]],
      [{}, ["source_article_type", "new_article_type"]],
    ];
    for (const [body, fields] of cases) {
      const res = await t.api.post(`${t.base}/duplicate`, body);
      expect(res.status).toBe(422);
      expect(typeof res.body.message).toBe("string");
      expect(Object.keys(res.body.errors).sort()).toEqual(fields.sort());
    }
    expect((await t.api.post(`${t.base}/duplicate`, { source_article_type: "existing", new_article_type: "blog_post" })).body.errors.new_article_type).toEqual([
      "custom workflows cannot use reserved global article type names",
    ]);
    const list = (await t.api.get(t.base)).body.data;
    expect(list.map((w: any) => w.slug)).toEqual(["existing"]);
  });
});
