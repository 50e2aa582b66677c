// POST /v1/articles orchestration (spec 4.1): body → project access → idempotent replay →
// article type, model, brand voice and image preset of the project → cross-field rules (every
// field failure reported at once) → idempotency claim → word reservation → article + outbox.
// Once words are reserved, any failure gives them back (at once, else the reconciler's sweep does).
import { randomUUID } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { Project } from "../../../proto/gen/articles/accounts_billing/v1/accounts_pb.ts";
import type { Article, ArticleSchema, AutoPublishSchema } from "../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import type { PinnedWorkflow } from "../../../proto/gen/articles/workflow_catalog/v1/snapshots_pb.ts";
import type { Model } from "../../../proto/gen/articles/generation_runner/v1/models_pb.ts";
import { fieldErrorsOf } from "../../../services/kit/src/errors.ts";
import type { Logger } from "../../../services/kit/src/logger.ts";
import { validationError } from "../errors.ts";
import type { Caller, V1Gate } from "../plugins/caller.ts";
import { MalformedBody } from "../plugins/json-body.ts";
import type { ServiceClients } from "../services.ts";
import { Validator } from "../validation.ts";
import { readArticleRequest, type ArticleRequest } from "./creation-request.ts";
import { KEY_REUSED_MESSAGE, requestHashOf } from "./idempotency.ts";
import { checkAutoPublish } from "../publishing/dispatcher-refusals.ts";

/** Creation reserves 120% of the target (spec 4.1 rule 1); settled later to the words generated. */
export const reservedWordsFor = (targetWordCount: number) => Math.ceil(targetWordCount * 1.2);

export interface CreatedArticle {
  article: Article;
  project: Project;
  /** The first response of an earlier request with the same Idempotency-Key. */
  replayed: boolean;
}

interface Resolved {
  workflow?: PinnedWorkflow;
  model?: Model;
  /** Where the article is published when it completes (`publish`), checked against the project's destinations. */
  publish?: MessageInitShape<typeof AutoPublishSchema>;
}

const isCode = (error: unknown, ...codes: Code[]): error is ConnectError => error instanceof ConnectError && codes.includes(error.code);

/** Runs a lookup whose "no such thing" answer is a field error rather than a failure. */
async function lookup<T>(v: Validator, field: string, message: string, call: () => Promise<T>, refusals: Code[] = [Code.NotFound]): Promise<T | undefined> {
  try {
    return await call();
  } catch (error) {
    if (!isCode(error, ...refusals)) throw error;
    const reported = fieldErrorsOf(error)[field];
    for (const m of reported?.length ? reported : [message]) v.fail(field, m);
    return undefined;
  }
}

/** The body's own checks, every failure collected in `v`; 422 at once when it is not a JSON object. */
export function readCreationBody(body: unknown): { v: Validator; request: ArticleRequest } {
  if (body instanceof MalformedBody) throw validationError({ body: [body.reason] });
  const v = new Validator(body ?? {});
  v.check(); // a body that is not a JSON object has no fields to report on
  return { v, request: readArticleRequest(v) };
}

/** The model catalog's answer for the request, from the gateway's memory of it (model-memory.ts). */
const resolveModel = (gate: V1Gate, requested: string): Promise<Model> =>
  gate.models.resolve(requested, async () => (await gate.clients.models.resolveModel({ model: requested })).model!);

/** The rules that need the project's catalog, styles and the model catalog; failures go to `v`. */
export async function resolveAgainstProject(gate: V1Gate, v: Validator, request: ArticleRequest, project: Project | undefined): Promise<Resolved> {
  const { clients } = gate;
  const projectId = project?.id;
  const [workflow, model, , , publish] = await Promise.all([
    projectId !== undefined && !v.errors.article_type
      ? lookup(v, "article_type", "The selected article type is invalid: it is neither a built-in type nor a custom workflow of this project.", async () =>
          gate.workflows.resolve(projectId, request.articleType, async () => (await clients.snapshots.resolveArticleType({ projectId, articleType: request.articleType })).workflow!),
        )
      : undefined,
    !v.errors.model
      ? lookup(
          v,
          "model",
          request.model ? `The selected model ${request.model} is not an active model.` : "No active model is available.",
          () => resolveModel(gate, request.model),
          [Code.InvalidArgument, Code.NotFound, Code.FailedPrecondition],
        )
      : undefined,
    projectId !== undefined && request.brandVoiceId !== null
      ? lookup(v, "brand_voice_id", "The selected brand voice is invalid.", async () => {
          const { brandVoice } = await clients.articles.getBrandVoice({ brandVoiceId: BigInt(request.brandVoiceId!) });
          // Another project's voice is reported exactly like a missing one.
          if (brandVoice!.projectId !== projectId) v.fail("brand_voice_id", "The selected brand voice is invalid.");
        })
      : undefined,
    projectId !== undefined && request.imagePresetId !== null
      ? lookup(v, "image_preset_id", "The selected image preset is invalid.", async () => {
          const { imagePreset } = await clients.articles.getImagePreset({ imagePresetId: BigInt(request.imagePresetId!) });
          if (imagePreset!.projectId !== projectId) v.fail("image_preset_id", "The selected image preset is invalid.");
        })
      : undefined,
    projectId !== undefined && request.publish
      ? checkAutoPublish(clients.publishing, projectId, request.publish).then(({ publish, errors }) => {
          for (const [field, messages] of Object.entries(errors)) for (const m of messages) v.fail(field, m);
          return publish;
        })
      : undefined,
  ]);

  if (workflow && request.researchEnabled && !workflow.hasResearchStep) {
    v.fail("research_enabled", `Research cannot be enabled: the ${request.articleType} workflow has no step that uses research.`);
  }
  if (request.useBatchApi && workflow && workflow.stepCount !== 1) {
    v.fail("use_batch_api", `The batch API is only available for single-step workflows; ${request.articleType} has ${workflow.stepCount} steps.`);
  }
  if (request.useBatchApi && model && !model.supportsBatch) {
    v.fail("use_batch_api", `The batch API is not available for the model ${model.id}.`);
  }
  return { workflow, model, publish };
}

function articleMessage(caller: Caller, project: Project, request: ArticleRequest, resolved: Resolved & Required<Pick<Resolved, "workflow" | "model">>, externalId: string): MessageInitShape<typeof ArticleSchema> {
  const { workflow, model } = resolved;
  // Omitted inherits the project's default audience; an explicit null means none.
  const audience = request.targetAudience === undefined ? project.defaultAudience : (request.targetAudience ?? undefined);
  return {
    externalId,
    accountId: BigInt(caller.accountId),
    projectId: project.id,
    title: request.title,
    articleType: request.articleType,
    targetKeyword: request.targetKeyword ?? undefined,
    keywords: request.keywords,
    targetWordCount: request.targetWordCount,
    tone: request.tone,
    pointOfView: request.pointOfView,
    language: request.language,
    countryTargeting: request.countryTargeting ?? undefined,
    humanize: request.humanize,
    additionalContext: request.additionalContext ?? undefined,
    webhookUrl: request.webhookUrl ?? undefined,
    status: request.status ?? (request.useBatchApi ? "batching" : "queued"),
    settings: {
      workflowId: workflow.workflowId,
      workflowRevision: workflow.revision,
      builtinWorkflow: workflow.builtin,
      model: model.id,
      targetAudience: audience,
      brandVoiceId: request.brandVoiceId === null ? undefined : BigInt(request.brandVoiceId),
      includeKeyTakeaways: request.includeKeyTakeaways,
      includeFaq: request.includeFaq,
      headingCapitalization: request.headingCapitalization ?? undefined,
      researchEnabled: request.researchEnabled,
      researchMaxSources: request.researchMaxSources,
      researchMinContentWords: request.researchMinContentWords,
      researchMaxWordsPerSource: request.researchMaxWordsPerSource,
      researchIncludeDomains: request.researchIncludeDomains,
      researchExcludeDomains: request.researchExcludeDomains,
      citations: request.citations,
      useBatchApi: request.useBatchApi,
      additionalInstruction: request.additionalInstruction ?? undefined,
      imageCount: request.imageCount,
      imageAspectRatio: request.imageAspectRatio ?? undefined,
      imagePresetId: request.imagePresetId === null ? undefined : BigInt(request.imagePresetId),
      reservedWords: BigInt(reservedWordsFor(request.targetWordCount)),
      publish: resolved.publish,
    },
  };
}

const keyReused = () => validationError({ idempotency_key: [KEY_REUSED_MESSAGE] }, KEY_REUSED_MESSAGE);

export class ArticleCreation {
  constructor(
    private readonly gate: V1Gate,
    private readonly logger: Logger,
  ) {}

  private get clients(): ServiceClients {
    return this.gate.clients;
  }

  async create(caller: Caller, body: unknown, idempotencyKey: string | undefined): Promise<CreatedArticle> {
    const { v, request } = readCreationBody(body);

    // Access outranks field errors: 404 for another account's project, 403 without update access.
    const project = v.errors.project_id
      ? undefined
      : await this.gate.projects.authorize(caller, request.projectId, "update");

    const idempotency = idempotencyKey === undefined ? undefined : { key: idempotencyKey, hash: requestHashOf(body) };
    if (idempotency && project && v.valid) {
      const earlier = await this.clients.articles.findIdempotentArticle({ accountId: BigInt(caller.accountId), idempotencyKey: idempotency.key });
      if (earlier.requestHash !== undefined && earlier.requestHash !== idempotency.hash) throw keyReused();
      if (earlier.article) return { article: earlier.article, project, replayed: true };
    }

    const resolved = await resolveAgainstProject(this.gate, v, request, project);
    v.check();
    const { workflow, model, publish } = resolved;
    if (!project || !workflow || !model) throw new Error("creation passed validation without its project, workflow or model");

    let externalId: string = randomUUID();
    if (idempotency) {
      try {
        const claim = await this.clients.articles.claimIdempotencyKey({ accountId: BigInt(caller.accountId), idempotencyKey: idempotency.key, requestHash: idempotency.hash });
        if (claim.article) return { article: claim.article, project, replayed: true };
        externalId = claim.externalId;
      } catch (error) {
        if (isCode(error, Code.AlreadyExists)) throw keyReused();
        throw error;
      }
    }

    // The external_id is the reservation's reference: a repeated claim reserves nothing twice.
    try {
      await this.clients.quota.reserveWords({
        accountId: BigInt(caller.accountId),
        reference: externalId,
        words: BigInt(reservedWordsFor(request.targetWordCount)),
        // Where the words go, for the usage report (GET /v1/usage); a session or workload has no key.
        projectId: project.id,
        keyId: caller.keyId ? BigInt(caller.keyId) : undefined,
      });
    } catch (error) {
      // A refusal reserved nothing; any other failure may have reserved before the reply was lost.
      if (!isCode(error, Code.FailedPrecondition)) await this.releaseUnlessCreated(externalId);
      throw error;
    }

    try {
      const created = await this.clients.articles.createArticle({
        article: articleMessage(caller, project, request, { workflow, model, publish }, externalId),
        idempotencyKey: idempotency?.key,
        requestHash: idempotency?.hash,
      });
      return { article: created.article!, project, replayed: created.replayed };
    } catch (error) {
      await this.releaseUnlessCreated(externalId);
      if (isCode(error, Code.AlreadyExists)) throw keyReused();
      throw error;
    }
  }

  /**
   * Gives the reservation back when no article holds it: one immediate, best-effort attempt. An
   * article that exists despite the failure (a lost reply) keeps its words; if the check itself
   * fails the words are released, and completion settles them anyway. What this attempt cannot
   * release (accounts-billing away), and what a gateway killed between reserving and creating
   * never tries to, the reconciler's sweep in article-store releases once the reservation has
   * been held RECONCILE_STALE_AFTER_MS with no article: no retry is kept in this process's memory,
   * where a restart would lose it.
   */
  private async releaseUnlessCreated(externalId: string): Promise<void> {
    try {
      await this.clients.articles.getArticle({ identifier: externalId });
      return;
    } catch (error) {
      if (!isCode(error, Code.NotFound)) this.logger.warn("could not check for the article before releasing its words", { externalId, error: (error as Error).message });
    }
    try {
      await this.clients.quota.releaseWords({ reference: externalId });
    } catch (error) {
      if (isCode(error, Code.NotFound)) return;
      this.logger.warn("could not release reserved words; the reconciler's sweep releases them", { externalId, error: (error as Error).message });
    }
  }
}
