// WorkflowSnapshotService (the contract article creation and the runner use): built-in types
// resolve to their pipelines; every custom revision is pinned and readable after later changes,
// even after the workflow is deleted (spec 2.3 rule 4).
import { beforeAll, describe, expect, test } from "bun:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { builtinWorkflow, BUILTIN_ARTICLE_TYPES } from "../../services/workflow-catalog/src/domain/builtin-workflows/index.ts";
import postgres from "postgres";
import { snapshotClient } from "../harness/service-clients.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { stepBody, workflowTenant } from "./workflows-fixtures.ts";

let stack: TestStack;
let snapshots: ReturnType<typeof snapshotClient>;
/** As the runner reads the snapshot it runs. */
let pinned: ReturnType<typeof snapshotClient>;
beforeAll(async () => {
  stack = await useStack();
  snapshots = snapshotClient(stack);
  pinned = snapshotClient(stack, "generation-runner");
});

async function codeOf(call: Promise<unknown>): Promise<Code | undefined> {
  try {
    await call;
    return undefined;
  } catch (error) {
    return (error as ConnectError).code;
  }
}

describe("built-in types", () => {
  test("every reserved type resolves to its pipeline, with workflow id 0", async () => {
    for (const type of BUILTIN_ARTICLE_TYPES) {
      const builtin = builtinWorkflow(type)!;
      const { workflow } = await snapshots.resolveArticleType({ projectId: 1n, articleType: type });
      expect(workflow!.workflowId).toBe(0n);
      expect(workflow!.builtin).toBe(true);
      expect(workflow!.articleType).toBe(type);
      expect(workflow!.revision).toBe(builtin.revision);
      expect(workflow!.stepCount).toBe(builtin.steps.length);
      expect(workflow!.hasResearchStep).toBe(builtin.steps.some((s) => s.include_research));
    }
  });

  test("the snapshot carries the steps with roles and the schema as JSON text", async () => {
    const builtin = builtinWorkflow("blog_post")!;
    const { workflow, steps } = await pinned.getSnapshot({ workflowId: 0n, revision: builtin.revision, articleType: "blog_post" });
    expect(workflow!.stepCount).toBe(builtin.steps.length);
    expect(steps.map((s) => s.stepNumber)).toEqual(builtin.steps.map((s) => s.step_number));
    expect(steps.map((s) => s.role)).toEqual(builtin.steps.map((s) => s.role));
    const outline = steps.find((s) => s.role === "outline")!;
    expect(outline.outputFormat).toBe("json");
    expect(JSON.parse(outline.jsonSchema!)).toEqual(builtin.steps.find((s) => s.role === "outline")!.json_schema as object);
    expect(steps[0].system).toBe(builtin.steps[0].system);
  });

  test("the single-step song meaning type has one step and no research", async () => {
    const { workflow } = await snapshots.resolveArticleType({ projectId: 1n, articleType: "song_meaning_single_model_5" });
    expect(workflow!.stepCount).toBe(1);
    expect(workflow!.hasResearchStep).toBe(false);
  });

  test("unknown types and revisions are NOT_FOUND", async () => {
    expect(await codeOf(snapshots.resolveArticleType({ projectId: 1n, articleType: "no_such_type" }))).toBe(Code.NotFound);
    expect(await codeOf(snapshots.resolveArticleType({ projectId: 1n, articleType: "Blog_Post" }))).toBe(Code.NotFound);
    expect(await codeOf(pinned.getSnapshot({ workflowId: 0n, revision: 999, articleType: "blog_post" }))).toBe(Code.NotFound);
    expect(await codeOf(pinned.getSnapshot({ workflowId: 987654n, revision: 1 }))).toBe(Code.NotFound);
  });
});

describe("custom types", () => {
  test("resolve to the current revision; earlier revisions keep their exact steps, also after deletion", async () => {
    const t = await workflowTenant(stack);
    const research = (
      await t.api.post(t.base, stepBody({ article_type: "pinned", step_number: 1, include_research: true, user: "Notes on {title}: {research}" }))
    ).body.data;
    const draft = (await t.api.post(t.base, stepBody({ article_type: "pinned", step_number: 2, user: "Write {title} from {step_1_output}." }))).body.data;
    const projectId = BigInt(t.projectId);

    const first = (await snapshots.resolveArticleType({ projectId, articleType: "pinned" })).workflow!;
    expect(first).toMatchObject({ workflowId: BigInt(draft.workflow_id), revision: 2, articleType: "pinned", builtin: false, stepCount: 2, hasResearchStep: true });

    await t.api.patch(`${t.base}/${research.id}`, { include_research: false, user: "Notes on {title}." });
    const second = (await snapshots.resolveArticleType({ projectId, articleType: "pinned" })).workflow!;
    expect(second).toMatchObject({ revision: 3, stepCount: 2, hasResearchStep: false });

    await t.api.delete(`${t.base}/${draft.id}`);
    await t.api.delete(`${t.base}/${research.id}`);
    expect(await codeOf(snapshots.resolveArticleType({ projectId, articleType: "pinned" }))).toBe(Code.NotFound);

    const firstPin = await pinned.getSnapshot({ workflowId: first.workflowId, revision: 2 });
    expect(firstPin.workflow).toMatchObject({ revision: 2, stepCount: 2, hasResearchStep: true, builtin: false });
    expect(firstPin.steps.map((s) => [s.stepNumber, s.user, s.includeResearch, s.role])).toEqual([
      [1, "Notes on {title}: {research}", true, ""],
      [2, "Write {title} from {step_1_output}.", false, ""],
    ]);
    const revised = await pinned.getSnapshot({ workflowId: first.workflowId, revision: 3 });
    expect(revised.steps[0]).toMatchObject({ user: "Notes on {title}.", includeResearch: false });
    const one = await pinned.getSnapshot({ workflowId: first.workflowId, revision: 1 });
    expect(one.workflow!.stepCount).toBe(1);
    expect(await codeOf(pinned.getSnapshot({ workflowId: first.workflowId, revision: 5 }))).toBe(Code.NotFound);
  });

  test("a custom type is resolved only for its own project", async () => {
    const owner = await workflowTenant(stack);
    const other = await workflowTenant(stack);
    await owner.api.post(owner.base, stepBody({ article_type: "private_type" }));
    expect((await snapshots.resolveArticleType({ projectId: BigInt(owner.projectId), articleType: "private_type" })).workflow!.builtin).toBe(false);
    expect(await codeOf(snapshots.resolveArticleType({ projectId: BigInt(other.projectId), articleType: "private_type" }))).toBe(Code.NotFound);
  });

  test("a stored snapshot cannot be rewritten", async () => {
    const t = await workflowTenant(stack);
    const step = (await t.api.post(t.base, stepBody({ article_type: "sealed" }))).body.data;
    const sql = postgres(stack.databaseUrl, { max: 1, onnotice: () => {} });
    try {
      const attempt = sql`update workflow_catalog.workflow_snapshots set steps = '[]'::jsonb where workflow_id = ${step.workflow_id}`;
      await expect(attempt).rejects.toThrow(/immutable/);
    } finally {
      await sql.end();
    }
    const { steps } = await pinned.getSnapshot({ workflowId: BigInt(step.workflow_id), revision: 1 });
    expect(steps).toHaveLength(1);
  });
});
