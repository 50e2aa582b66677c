// The custom workflow operations of the public API, once: what `/v1/projects/{project}/workflows`
// (HTTP, routes/workflows.ts) and `articles.api.v1.WorkflowService` (gRPC,
// grpc/workflow-service.ts) both run. Each takes the caller the gates let through, the path's
// ids as given (anything but a positive integer is 404) and the public body; the two surfaces only
// translate to and from it. Order of checks: path ids (404), project access (404/403), body (422),
// then the catalog.
import { Code, ConnectError } from "@connectrpc/connect";
import { fieldErrorsOf, type FieldErrors } from "../../../services/kit/src/errors.ts";
import { HttpError, notFoundError, validationError } from "../errors.ts";
import type { Caller, V1Gate } from "../plugins/caller.ts";
import type { ProjectAccess } from "../plugins/project-authorizer.ts";
import { presentStep, presentWorkflow } from "../presenters/workflow.ts";
import type { QueryValues } from "../validation.ts";
import { pageMeta } from "../../../services/kit/src/rules/page-window.ts";
import { createStepInput, duplicateInput, listQuery, pathId, reorderInput, updateStepInput } from "./step-input.ts";

export type PresentedStep = ReturnType<typeof presentStep>;
export type PresentedWorkflow = ReturnType<typeof presentWorkflow>;

/** A changed step, with the catalog's warnings about its prompts (spec 2.1's optional message). */
export interface ChangedStep {
  step: PresentedStep;
  warnings: string[];
}

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

/**
 * The caps of the caller's plan on custom workflows, as accounts-billing decided them (the plan's
 * own, else the deployment's default); the catalog holds every change to them.
 */
const workflowCaps = ({ plan }: Caller) => ({
  stepsPerWorkflow: plan.caps?.stepsPerWorkflow,
  promptCharacters: plan.caps?.promptCharacters,
  workflowsPerProject: plan.caps?.workflowsPerProject,
});

export class WorkflowOperations {
  constructor(private readonly gate: V1Gate) {}

  private get catalog() {
    return this.gate.clients.workflows;
  }

  /** Every call that may change the project's workflows: creations then resolve types afresh. */
  private changing<T>(projectId: bigint, change: () => Promise<T>): Promise<T> {
    return this.gate.workflows.changing(projectId, change);
  }

  /** The project id of the path, after the caller's access to it is confirmed. */
  private async project(caller: Caller, raw: string, access: ProjectAccess): Promise<bigint> {
    const id = pathId(raw);
    if (id === null) throw notFoundError("Project not found.");
    await this.gate.projects.authorize(caller, id, access);
    return BigInt(id);
  }

  private stepId(raw: string): bigint {
    const id = pathId(raw);
    if (id === null) throw notFoundError("Workflow step not found.");
    return BigInt(id);
  }

  async list(caller: Caller, project: string, query: QueryValues) {
    const projectId = await this.project(caller, project, "view");
    const { articleType, unknownType, page, perPage } = listQuery(query);
    if (unknownType) return { workflows: [], meta: pageMeta({ page, perPage }, 0) };
    // Remembered as presented until the project's workflows change (workflow-memory.ts).
    return this.gate.workflows.page(projectId, JSON.stringify([articleType ?? null, page, perPage]), async () => {
      const reply = await this.catalog.listWorkflows({ projectId, articleType, page, perPage });
      return { workflows: reply.workflows.map(presentWorkflow), meta: pageMeta({ page: reply.page, perPage: reply.perPage }, reply.total) };
    });
  }

  async createStep(caller: Caller, project: string, body: unknown): Promise<ChangedStep> {
    const projectId = await this.project(caller, project, "update");
    const { input, errors } = createStepInput(body);
    const reply = await changeStep(errors, (validateOnly) => this.changing(projectId, () => this.catalog.createStep({ projectId, ...input, validateOnly, caps: workflowCaps(caller) })));
    return { step: presentStep(reply.step!), warnings: reply.warnings };
  }

  async getStep(caller: Caller, project: string, step: string): Promise<PresentedStep> {
    const stepId = this.stepId(step);
    const projectId = await this.project(caller, project, "view");
    return presentStep((await this.catalog.getStep({ projectId, stepId })).step!);
  }

  async updateStep(caller: Caller, project: string, step: string, body: unknown): Promise<ChangedStep> {
    const stepId = this.stepId(step);
    const projectId = await this.project(caller, project, "update");
    const { input, errors } = updateStepInput(body);
    const reply = await changeStep(errors, (validateOnly) => this.changing(projectId, () => this.catalog.updateStep({ projectId, stepId, ...input, validateOnly, caps: workflowCaps(caller) })));
    return { step: presentStep(reply.step!), warnings: reply.warnings };
  }

  /** Deletes a step; the workflow goes with its last one. */
  async deleteStep(caller: Caller, project: string, step: string): Promise<{ workflowDeleted: boolean; articleType: string }> {
    const stepId = this.stepId(step);
    const projectId = await this.project(caller, project, "update");
    const reply = await this.changing(projectId, () => this.catalog.deleteStep({ projectId, stepId }));
    return { workflowDeleted: reply.workflowDeleted, articleType: reply.articleType };
  }

  async reorder(caller: Caller, project: string, body: unknown): Promise<void> {
    const projectId = await this.project(caller, project, "update");
    const positions = reorderInput(body);
    try {
      await this.changing(projectId, () => this.catalog.reorderSteps({ projectId, positions }));
    } catch (error) {
      // Spec 4.9: a step of another project rejects the whole request in this particular shape.
      if (error instanceof ConnectError && error.code === Code.NotFound) throw new HttpError(422, { success: false, message: error.rawMessage });
      throw error;
    }
  }

  async duplicate(caller: Caller, project: string, body: unknown): Promise<PresentedWorkflow> {
    const projectId = await this.project(caller, project, "update");
    const reply = await this.changing(projectId, () => this.catalog.duplicateWorkflow({ projectId, ...duplicateInput(body), caps: workflowCaps(caller) }));
    return presentWorkflow(reply.workflow!);
  }
}
