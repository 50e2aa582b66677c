// Custom workflow endpoints (spec 4.4–4.10): /v1/projects/{project}/workflows. {project} is a
// project id, {workflow} a step id; anything but a positive integer there is 404. Gates first
// (401/402/429); each route is a translation of HTTP to the operations gRPC's WorkflowService runs
// too (workflows/workflow-operations.ts).
import { Elysia } from "elysia";
import { v1Mount, type CallerMount } from "../plugins/v1-gate.ts";
import { queryValues } from "../validation.ts";
import type { Caller, V1Gate } from "../plugins/caller.ts";
import type { WorkflowOperations } from "../workflows/workflow-operations.ts";

const TAGS = ["Workflows"];

/** Warnings about accepted prompts travel in the envelope's optional message (spec 2.1). */
const withWarnings = (body: { success: true; data: unknown }, warnings: string[]) => (warnings.length ? { ...body, message: warnings.join(" ") } : body);

/** `mount`: /v1 with a key, or the dashboard's API with a session (the same handlers). */
export const workflowRoutes = (gate: V1Gate, workflows: WorkflowOperations, mount: CallerMount = v1Mount(gate)) => {
  const at = mount.prefix;
  const updateStep = async ({ caller, params, body }: { caller: Caller; params: { project: string; workflow: string }; body: unknown }) => {
    const { step, warnings } = await workflows.updateStep(caller, params.project, params.workflow, body);
    return withWarnings({ success: true, data: step }, warnings);
  };

  return new Elysia({ name: "workflow-routes", seed: at })
    .use(mount.gateFor("workflows"))
    .get(
      `${at}/projects/:project/workflows`,
      async ({ caller, params, request }) => {
        const { workflows: data, meta } = await workflows.list(caller, params.project, queryValues(request.url));
        return { success: true, data, meta };
      },
      { detail: { summary: "List the project's custom workflows with their steps", tags: TAGS } },
    )
    .post(
      `${at}/projects/:project/workflows`,
      async ({ caller, params, body, set }) => {
        const { step, warnings } = await workflows.createStep(caller, params.project, body);
        set.status = 201;
        return withWarnings({ success: true, data: step }, warnings);
      },
      { detail: { summary: "Create a workflow step (the first step of a new article_type creates the workflow)", tags: TAGS } },
    )
    .post(
      `${at}/projects/:project/workflows/reorder`,
      async ({ caller, params, body }) => {
        await workflows.reorder(caller, params.project, body);
        return { success: true, message: "Workflow steps reordered." };
      },
      { detail: { summary: "Renumber several steps at once", tags: TAGS } },
    )
    .post(
      `${at}/projects/:project/workflows/duplicate`,
      async ({ caller, params, body, set }) => {
        const data = await workflows.duplicate(caller, params.project, body);
        set.status = 201;
        return { success: true, data };
      },
      { detail: { summary: "Copy a custom or built-in workflow into a new custom type", tags: TAGS } },
    )
    .get(
      `${at}/projects/:project/workflows/:workflow`,
      async ({ caller, params }) => ({ success: true, data: await workflows.getStep(caller, params.project, params.workflow) }),
      { detail: { summary: "Retrieve a workflow step with its prompts", tags: TAGS } },
    )
    .patch(`${at}/projects/:project/workflows/:workflow`, updateStep, { detail: { summary: "Update a workflow step (same as PUT)", tags: TAGS } })
    .put(`${at}/projects/:project/workflows/:workflow`, updateStep, { detail: { summary: "Update a workflow step (same as PATCH)", tags: TAGS } })
    .delete(
      `${at}/projects/:project/workflows/:workflow`,
      async ({ caller, params }) => {
        const { workflowDeleted, articleType } = await workflows.deleteStep(caller, params.project, params.workflow);
        const message = workflowDeleted ? `Workflow step deleted. It was the last step of "${articleType}", so that workflow was deleted too.` : "Workflow step deleted.";
        return { success: true, message };
      },
      { detail: { summary: "Delete a workflow step (the last step deletes the workflow)", tags: TAGS } },
    );
};
