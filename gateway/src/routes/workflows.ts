// Custom workflow endpoints (spec 4.4–4.10): /v1/projects/{project}/workflows. {project} is a
// project id, {workflow} a step id; anything but a positive integer there is 404. Order of checks:
// gates (401/402/429), path ids (404), project access (404/403), body (422), then the catalog.
import { Elysia } from "elysia";
import { Code, ConnectError } from "@connectrpc/connect";
import { fieldErrorsOf, type FieldErrors } from "../../../services/kit/src/errors.ts";
import { HttpError, notFoundError, validationError } from "../errors.ts";
import { v1Gate } from "../plugins/v1-gate.ts";
import { queryValues } from "../validation.ts";
import type { Caller, V1Gate } from "../plugins/caller.ts";
import { presentStep, presentWorkflow } from "../presenters/workflow.ts";
import type { ProjectAccess } from "../plugins/project-authorizer.ts";
import { createStepInput, duplicateInput, listQuery, pathId, reorderInput, updateStepInput } from "../workflows/step-input.ts";

const TAGS = ["Workflows"];

/** Warnings about accepted prompts travel in the envelope's optional message (spec 2.1). */
const withWarnings = (body: { success: true; data: unknown }, warnings: string[]) => (warnings.length ? { ...body, message: warnings.join(" ") } : body);

/**
 * Runs a step change. When the gateway already refused some fields, the catalog only checks the
 * request (validate_only) and its problems with the other fields join the gateway's in one 422.
 */
async function changeStep<T>(gatewayErrors: FieldErrors, change: (validateOnly: boolean) => Promise<T>): Promise<T> {
  if (Object.keys(gatewayErrors).length === 0) return change(false);
  const errors = { ...gatewayErrors };
  try {
    await change(true);
  } catch (error) {
    if (!(error instanceof ConnectError) || error.code !== Code.InvalidArgument) throw error;
    // A field the gateway refused went to the catalog as a stand-in value: the gateway's message stands.
    for (const [field, messages] of Object.entries(fieldErrorsOf(error))) errors[field] ??= messages;
  }
  throw validationError(errors);
}

export const workflowRoutes = (gate: V1Gate) => {
  const catalog = gate.clients.workflows;
  // Every call that may change the project's workflows: creations then resolve types afresh.
  const changing = <T>(projectId: bigint, change: () => Promise<T>) => gate.workflows.changing(projectId, change);

  /** The project id of the path, after the caller's access to it is confirmed. */
  async function project(caller: Caller, raw: string, access: ProjectAccess): Promise<bigint> {
    const id = pathId(raw);
    if (id === null) throw notFoundError("Project not found.");
    await gate.projects.authorize(caller.userId, id, access);
    return BigInt(id);
  }

  function stepId(raw: string): bigint {
    const id = pathId(raw);
    if (id === null) throw notFoundError("Workflow step not found.");
    return BigInt(id);
  }

  const updateStep = async ({ caller, params, body }: { caller: Caller; params: { project: string; workflow: string }; body: unknown }) => {
    const step = stepId(params.workflow);
    const projectId = await project(caller, params.project, "update");
    const { input, errors } = updateStepInput(body);
    const reply = await changeStep(errors, (validateOnly) => changing(projectId, () => catalog.updateStep({ projectId, stepId: step, ...input, validateOnly })));
    return withWarnings({ success: true, data: presentStep(reply.step!) }, reply.warnings);
  };

  return new Elysia({ name: "workflow-routes" })
    .use(v1Gate(gate, "workflows"))
    .get(
      "/v1/projects/:project/workflows",
      async ({ caller, params, request }) => {
        const projectId = await project(caller, params.project, "view");
        const { articleType, page, perPage } = listQuery(queryValues(request.url));
        const reply = await catalog.listWorkflows({ projectId, articleType, page, perPage });
        return {
          success: true,
          data: reply.workflows.map(presentWorkflow),
          meta: { current_page: reply.page, last_page: Math.max(1, Math.ceil(reply.total / reply.perPage)), per_page: reply.perPage, total: reply.total },
        };
      },
      { detail: { summary: "List the project's custom workflows with their steps", tags: TAGS } },
    )
    .post(
      "/v1/projects/:project/workflows",
      async ({ caller, params, body, set }) => {
        const projectId = await project(caller, params.project, "update");
        const { input, errors } = createStepInput(body);
        const reply = await changeStep(errors, (validateOnly) => changing(projectId, () => catalog.createStep({ projectId, ...input, validateOnly })));
        set.status = 201;
        return withWarnings({ success: true, data: presentStep(reply.step!) }, reply.warnings);
      },
      { detail: { summary: "Create a workflow step (the first step of a new article_type creates the workflow)", tags: TAGS } },
    )
    .post(
      "/v1/projects/:project/workflows/reorder",
      async ({ caller, params, body }) => {
        const projectId = await project(caller, params.project, "update");
        const positions = reorderInput(body);
        try {
          await changing(projectId, () => catalog.reorderSteps({ projectId, positions }));
        } catch (error) {
          // Spec 4.9: a step of another project rejects the whole request in this particular shape.
          if (error instanceof ConnectError && error.code === Code.NotFound) throw new HttpError(422, { success: false, message: error.rawMessage });
          throw error;
        }
        return { success: true, message: "Workflow steps reordered." };
      },
      { detail: { summary: "Renumber several steps at once", tags: TAGS } },
    )
    .post(
      "/v1/projects/:project/workflows/duplicate",
      async ({ caller, params, body, set }) => {
        const projectId = await project(caller, params.project, "update");
        const reply = await changing(projectId, () => catalog.duplicateWorkflow({ projectId, ...duplicateInput(body) }));
        set.status = 201;
        return { success: true, data: presentWorkflow(reply.workflow!) };
      },
      { detail: { summary: "Copy a custom or built-in workflow into a new custom type", tags: TAGS } },
    )
    .get(
      "/v1/projects/:project/workflows/:workflow",
      async ({ caller, params }) => {
        const step = stepId(params.workflow);
        const projectId = await project(caller, params.project, "view");
        const reply = await catalog.getStep({ projectId, stepId: step });
        return { success: true, data: presentStep(reply.step!) };
      },
      { detail: { summary: "Retrieve a workflow step with its prompts", tags: TAGS } },
    )
    .patch("/v1/projects/:project/workflows/:workflow", updateStep, { detail: { summary: "Update a workflow step (same as PUT)", tags: TAGS } })
    .put("/v1/projects/:project/workflows/:workflow", updateStep, { detail: { summary: "Update a workflow step (same as PATCH)", tags: TAGS } })
    .delete(
      "/v1/projects/:project/workflows/:workflow",
      async ({ caller, params }) => {
        const step = stepId(params.workflow);
        const projectId = await project(caller, params.project, "update");
        const reply = await changing(projectId, () => catalog.deleteStep({ projectId, stepId: step }));
        const message = reply.workflowDeleted
          ? `Workflow step deleted. It was the last step of "${reply.articleType}", so that workflow was deleted too.`
          : "Workflow step deleted.";
        return { success: true, message };
      },
      { detail: { summary: "Delete a workflow step (the last step deletes the workflow)", tags: TAGS } },
    );
};
