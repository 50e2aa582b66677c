// The per-plan caps on custom workflows (docs/api.md, "Where the spec is silent"): steps in one
// workflow, characters in one prompt, workflows in one project. The request at a cap is accepted,
// the one past it is a 422 naming the cap, on every path that adds (POST, PATCH moving a step or
// lengthening a prompt, duplicate, the public gRPC WorkflowService); raising the plan's cap lets it
// through, and a workflow already over a lowered cap keeps running. Also: a long prompt is paid
// for in the article's cost and its step breakdown, whatever the words it produced.
import { beforeAll, describe, expect, test } from "bun:test";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { createArticle } from "../harness/articles.ts";
import { eventually } from "../harness/eventually.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { operatorClient } from "../harness/tenants.ts";
import { articleBody, waitForArticle } from "./generation-support.ts";
import { stepBody, workflowTenant, type WorkflowTenant } from "./workflows-fixtures.ts";

let stack: TestStack;
beforeAll(async () => {
  stack = await useStack();
});

type Caps = NonNullable<Parameters<typeof workflowTenant>[1]>["caps"];

/** Changes the tenant's plan's own caps. */
const raise = (t: WorkflowTenant, caps: Caps) => operatorClient(stack).updatePlan({ planId: BigInt(t.planId), caps });

/** Sends a change until the changed cap reaches the gateway (it remembers a key's plan for half a second). */
const acceptedOnceRaised = (send: () => Promise<{ status: number; body: any }>, status = 201) =>
  eventually(send, (res) => res.status === status, 10_000, `an answer ${status} once the cap is raised`);

/**
 * A duplicate of `source` once a lowered cap reaches the gateway: each try names a new type, so a
 * try the old cap still let through leaves a copy behind and the next one asks again.
 */
let copies = 0;
const duplicateOnceLowered = (t: WorkflowTenant, source: string) =>
  eventually(() => t.api.post(`${t.base}/duplicate`, { source_article_type: source, new_article_type: `copy_${++copies}` }), (res) => res.status === 422, 10_000, "the lowered cap to refuse a copy");

describe("plans carry their caps", () => {
  test("a plan without caps of its own has the deployment's defaults in force; its own replace them, and default_caps returns one", async () => {
    const t = await workflowTenant(stack);
    const op = operatorClient(stack);
    const { plan } = await op.updatePlan({ planId: BigInt(t.planId) });
    expect(plan!.caps).toMatchObject({ stepsPerWorkflow: 25, promptCharacters: 20_000, workflowsPerProject: 50, destinationsPerProject: 10, openEventStreams: 20 });
    expect(plan!.ownCaps?.stepsPerWorkflow).toBeUndefined();

    const raised = (await raise(t, { stepsPerWorkflow: 60, openEventStreams: 100 })).plan!;
    expect(raised.caps).toMatchObject({ stepsPerWorkflow: 60, openEventStreams: 100, promptCharacters: 20_000 });
    expect(raised.ownCaps).toMatchObject({ stepsPerWorkflow: 60, openEventStreams: 100 });

    const back = (await op.updatePlan({ planId: BigInt(t.planId), defaultCaps: ["steps_per_workflow"] })).plan!;
    expect(back.caps).toMatchObject({ stepsPerWorkflow: 25, openEventStreams: 100 });
    expect(back.ownCaps?.stepsPerWorkflow).toBeUndefined();

    // The project's answer carries the same caps in force (what webhook-dispatcher reads).
    const { AccountsService } = await import("../../proto/gen/articles/accounts_billing/v1/accounts_pb.ts");
    const { stackClient } = await import("../harness/service-clients.ts");
    const accounts = stackClient(stack, AccountsService, stack.env.ACCOUNTS_BILLING_URL, "operator");
    expect((await accounts.getProject({ projectId: BigInt(t.projectId) })).caps).toMatchObject({ stepsPerWorkflow: 25, openEventStreams: 100 });

    await expect(raise(t, { stepsPerWorkflow: 0 })).rejects.toThrow(/steps_per_workflow must be a whole number from 1/);
    await expect(op.updatePlan({ planId: BigInt(t.planId), defaultCaps: ["steps"] })).rejects.toThrow(/not a cap/);
  });
});

describe("steps per workflow", () => {
  test("the step at the cap is added, the next is 422 naming steps_per_workflow; a move into the full workflow too; raising the cap lets it in", async () => {
    const t = await workflowTenant(stack, { caps: { stepsPerWorkflow: 2 } });
    expect((await t.api.post(t.base, stepBody({ step_number: 1 }))).status).toBe(201);
    expect((await t.api.post(t.base, stepBody({ step_number: 2 }))).status).toBe(201);
    const past = await t.api.post(t.base, stepBody({ step_number: 3 }));
    expect(past.status).toBe(422);
    expect(Object.keys(past.body)).toEqual(["message", "errors"]);
    expect(past.body.errors.article_type[0]).toContain("steps_per_workflow");
    expect(past.body.errors.article_type[0]).toContain("at most 2");
    // A field the gateway refuses and the full workflow, in one 422.
    const both = await t.api.post(t.base, stepBody({ step_number: 3, step_name: 42 }));
    expect(both.status).toBe(422);
    expect(Object.keys(both.body.errors).sort()).toEqual(["article_type", "step_name"]);
    expect(both.body.errors.article_type).toEqual(past.body.errors.article_type);

    const elsewhere = await t.api.post(t.base, stepBody({ article_type: "other_page", step_number: 3 }));
    expect(elsewhere.status).toBe(201);
    const moved = await t.api.patch(`${t.base}/${elsewhere.body.data.id}`, { article_type: "faq_page" });
    expect(moved.status).toBe(422);
    expect(moved.body.errors.article_type[0]).toContain("steps_per_workflow");

    await raise(t, { stepsPerWorkflow: 3 });
    const admitted = await acceptedOnceRaised(() => t.api.patch(`${t.base}/${elsewhere.body.data.id}`, { article_type: "faq_page" }), 200);
    expect(admitted.body.data.article_type).toBe("faq_page");
    expect((await t.api.post(t.base, stepBody({ step_number: 4 }))).status).toBe(422);
  });

  test("a workflow over a lowered cap keeps running, and may shrink; it cannot be duplicated whole past the cap", async () => {
    const t = await workflowTenant(stack, { caps: { stepsPerWorkflow: 3 } });
    for (const n of [1, 2, 3]) expect((await t.api.post(t.base, stepBody({ step_number: n, user: `Step ${n} of {title}.` }))).status).toBe(201);
    await raise(t, { stepsPerWorkflow: 2 });
    const copy = await duplicateOnceLowered(t, "faq_page");
    expect(copy.body.errors.source_article_type[0]).toContain("steps_per_workflow");

    const article = await createArticle(t.api, articleBody(t.projectId, { article_type: "faq_page" }));
    const done = await waitForArticle(t.api, article.id);
    expect(done.status).toBe("completed");

    const workflow = (await t.api.get(`${t.base}?article_type=faq_page`)).body.data[0];
    expect((await t.api.patch(`${t.base}/${workflow.steps[2].id}`, { step_name: "Renamed" })).status).toBe(200);
    expect((await t.api.delete(`${t.base}/${workflow.steps[2].id}`)).status).toBe(200);
  });
});

describe("prompt length", () => {
  test("a prompt at the cap is stored, one character more is 422 on that prompt naming prompt_characters; raising the cap lets it in", async () => {
    const t = await workflowTenant(stack, { caps: { promptCharacters: 100 } });
    const at = "x".repeat(100);
    const created = await t.api.post(t.base, stepBody({ user: at, system: "🙂".repeat(100) }));
    expect(created.status).toBe(201);
    const past = await t.api.post(t.base, stepBody({ step_number: 2, user: `${at}y`, system: `${at}y` }));
    expect(past.status).toBe(422);
    expect(past.body.errors.user[0]).toContain("prompt_characters");
    expect(past.body.errors.system[0]).toContain("101 characters");

    const longer = await t.api.patch(`${t.base}/${created.body.data.id}`, { user: `${at}y` });
    expect(longer.status).toBe(422);
    expect(longer.body.errors.user[0]).toContain("prompt_characters");

    await raise(t, { promptCharacters: 101 });
    await acceptedOnceRaised(() => t.api.patch(`${t.base}/${created.body.data.id}`, { user: `${at}y` }), 200);
  });

  test("a step stored before a lowered cap keeps its prompt, is edited freely otherwise, and may be made shorter; a copy of it past the cap is refused", async () => {
    const t = await workflowTenant(stack, { caps: { promptCharacters: 100 } });
    const created = await t.api.post(t.base, stepBody({ user: "x".repeat(100) }));
    expect(created.status).toBe(201);
    await raise(t, { promptCharacters: 50 });
    const copy = await duplicateOnceLowered(t, "faq_page");
    expect(copy.body.errors.source_article_type[0]).toContain("prompt_characters");
    expect((await t.api.patch(`${t.base}/${created.body.data.id}`, { step_name: "Renamed" })).status).toBe(200);
    expect((await t.api.patch(`${t.base}/${created.body.data.id}`, { user: "x".repeat(80) })).status).toBe(200);
    expect((await t.api.patch(`${t.base}/${created.body.data.id}`, { user: "x".repeat(81) })).status).toBe(422);
  });
});

describe("workflows per project", () => {
  test("the workflow at the cap is created, the next is 422 naming workflows_per_project by POST, PATCH and duplicate; steps of existing ones still join; raising lets it in", async () => {
    const t = await workflowTenant(stack, { caps: { workflowsPerProject: 2 } });
    expect((await t.api.post(t.base, stepBody({ article_type: "first" }))).status).toBe(201);
    const second = await t.api.post(t.base, stepBody({ article_type: "second" }));
    expect(second.status).toBe(201);
    const third = await t.api.post(t.base, stepBody({ article_type: "third" }));
    expect(third.status).toBe(422);
    expect(third.body.errors.article_type[0]).toContain("workflows_per_project");
    // A field the gateway refuses is named with the full project, by POST and by a PATCH moving a step.
    const both = await t.api.post(t.base, stepBody({ article_type: "third", step_name: 42 }));
    expect(both.status).toBe(422);
    expect(Object.keys(both.body.errors).sort()).toEqual(["article_type", "step_name"]);
    expect(both.body.errors.article_type).toEqual(third.body.errors.article_type);
    const movedWithBadField = await t.api.patch(`${t.base}/${second.body.data.id}`, { article_type: "third", step_name: 42 });
    expect(movedWithBadField.status).toBe(422);
    expect(Object.keys(movedWithBadField.body.errors).sort()).toEqual(["article_type", "step_name"]);
    expect(movedWithBadField.body.errors.article_type[0]).toContain("workflows_per_project");
    expect((await t.api.post(t.base, stepBody({ article_type: "first", step_number: 2 }))).status).toBe(201);

    const moved = await t.api.patch(`${t.base}/${second.body.data.id}`, { article_type: "third" });
    // The only step of "second" leaving it would leave two workflows, but the new one is counted before the old one goes.
    expect(moved.status).toBe(422);
    expect(moved.body.errors.article_type[0]).toContain("workflows_per_project");
    const copy = await t.api.post(`${t.base}/duplicate`, { source_article_type: "first", new_article_type: "third" });
    expect(copy.status).toBe(422);
    expect(copy.body.errors.new_article_type[0]).toContain("workflows_per_project");
    const fromBuiltin = await t.api.post(`${t.base}/duplicate`, { source_article_type: "blog_post", new_article_type: "third" });
    expect(fromBuiltin.status).toBe(422);

    await raise(t, { workflowsPerProject: 3 });
    await acceptedOnceRaised(() => t.api.post(`${t.base}/duplicate`, { source_article_type: "first", new_article_type: "third" }));
    expect((await t.api.post(t.base, stepBody({ article_type: "fourth" }))).status).toBe(422);
  });

  test("concurrent creations of new workflows never pass the cap together", async () => {
    const t = await workflowTenant(stack, { caps: { workflowsPerProject: 3 } });
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => t.api.post(t.base, stepBody({ article_type: `racing_${i}` }))));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(3);
    expect(answers.filter((a) => a.status === 422)).toHaveLength(5);
    expect((await t.api.get(t.base)).body.meta.total).toBe(3);
  });
});

describe("the public gRPC WorkflowService", () => {
  test("holds the same caps: INVALID_ARGUMENT naming the cap", async () => {
    const protoRoot = fileURLToPath(new URL("../../proto", import.meta.url));
    const definition = protoLoader.loadSync("articles/api/v1/workflows.proto", { includeDirs: [protoRoot], keepCase: true, longs: String, enums: String, defaults: false, oneofs: true });
    const client = new (grpc.loadPackageDefinition(definition) as any).articles.api.v1.WorkflowService(new URL(stack.publicGrpcUrl).host, grpc.credentials.createInsecure());
    const t = await workflowTenant(stack, { caps: { stepsPerWorkflow: 1 } });
    expect((await t.api.post(t.base, stepBody())).status).toBe(201);
    const metadata = new grpc.Metadata();
    metadata.set("authorization", `Bearer ${t.token}`);
    const step = { project_id: String(t.projectId), step: { ...stepBody({ step_number: 2 }) } };
    const error = await new Promise<grpc.ServiceError>((resolve, reject) =>
      client.CreateWorkflowStep(step, metadata, { deadline: Date.now() + 10_000 }, (e: grpc.ServiceError | null) => (e ? resolve(e) : reject(new Error("CreateWorkflowStep was not refused")))),
    );
    client.close();
    expect(error.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(error.details).toContain("steps_per_workflow");
  });
});

describe("a long prompt is paid for", () => {
  test("its prompt tokens show in the article's cost and its step breakdown; the words settled are the words written", async () => {
    const t = await workflowTenant(stack);
    const padding = " Background the writer must read.".repeat(450); // ~15,000 characters, within the default cap
    expect((await t.api.post(t.base, stepBody({ article_type: "short_prompt", user: "Write about {title}." }))).status).toBe(201);
    expect((await t.api.post(t.base, stepBody({ article_type: "long_prompt", user: `Write about {title}.${padding}` }))).status).toBe(201);
    const [short, long] = await Promise.all(
      ["short_prompt", "long_prompt"].map(async (type) => waitForArticle(t.api, (await createArticle(t.api, articleBody(t.projectId, { article_type: type, target_word_count: 100 }))).id)),
    );
    expect([short.status, long.status]).toEqual(["completed", "completed"]);
    const [shortSteps, longSteps] = await Promise.all([short, long].map(async (a) => (await t.api.get(`/v1/articles/${a.id}/steps`)).body.data.steps));
    expect(longSteps[0].prompt_tokens).toBeGreaterThan(shortSteps[0].prompt_tokens + 2_000);
    expect(Number(longSteps[0].cost)).toBeGreaterThan(Number(shortSteps[0].cost));
    expect(Number(long.cost)).toBeGreaterThan(Number(short.cost));
    // The word allowance counts what was written, which the prompt's length does not change.
    expect(long.actual_word_count).toBe(short.actual_word_count);
  });
});
