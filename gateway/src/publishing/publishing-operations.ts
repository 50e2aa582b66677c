// The publishing operations of the public API, once: a project's destinations
// (/v1/projects/{project}/destinations) and publishing an article (POST /v1/articles/{id}/publish,
// and `publish` at creation). Order of checks as for workflows: path ids (404), project access
// (404/403, update access for every change and for a connection check, which uses the stored
// credential), body (422), then webhook-dispatcher, which owns the destinations.
import type { CheckDestinationResponse, Destination } from "../../../proto/gen/articles/webhook_dispatcher/v1/publishing_pb.ts";
import { iso } from "../../../services/kit/src/public-article.ts";
import type { ArticleOperations } from "../articles/article-operations.ts";
import type { ArticleWithProject } from "../articles/article-with-project.ts";
import { notFoundError, validationError } from "../errors.ts";
import type { Caller, V1Gate } from "../plugins/caller.ts";
import type { ProjectAccess } from "../plugins/project-authorizer.ts";
import { pathId } from "../workflows/step-input.ts";
import { fieldErrorsOfRefusal } from "./dispatcher-refusals.ts";
import { destinationInput, publishInput } from "./publish-input.ts";

export const presentDestination = (d: Destination) => ({
  id: Number(d.id),
  project_id: Number(d.projectId),
  kind: d.kind,
  name: d.name,
  site_url: d.siteUrl,
  username: d.username ?? null,
  default_status: d.defaultStatus,
  default_categories: [...d.defaultCategories],
  default_tags: [...d.defaultTags],
  author_id: d.authorId === undefined ? null : Number(d.authorId),
  created_at: iso(d.createdAt),
});

export const presentCheck = (c: CheckDestinationResponse) => ({
  ok: c.ok,
  problems: [...c.problems],
  user_name: c.userName ?? null,
  can_create_posts: c.canCreatePosts,
  can_publish_posts: c.canPublishPosts,
  can_upload_media: c.canUploadMedia,
});

export type PresentedDestination = ReturnType<typeof presentDestination>;

async function asFieldErrors<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const errors = fieldErrorsOfRefusal("", error);
    throw errors ? validationError(errors) : error;
  }
}

export class PublishingOperations {
  constructor(
    private readonly gate: V1Gate,
    private readonly articles: ArticleOperations,
  ) {}

  private get dispatcher() {
    return this.gate.clients.publishing;
  }

  /** The project id of the path, after the caller's access to it is confirmed. */
  private async project(caller: Caller, raw: string, access: ProjectAccess): Promise<bigint> {
    const id = pathId(raw);
    if (id === null) throw notFoundError("Project not found.");
    await this.gate.projects.authorize(caller, id, access);
    return BigInt(id);
  }

  private destinationId(raw: string): bigint {
    const id = pathId(raw);
    if (id === null) throw notFoundError("Destination not found.");
    return BigInt(id);
  }

  async list(caller: Caller, project: string): Promise<PresentedDestination[]> {
    const projectId = await this.project(caller, project, "view");
    return (await this.dispatcher.listDestinations({ projectId })).destinations.map(presentDestination);
  }

  /** The destination added, and what the site's first contact found amiss without refusing it. */
  async create(caller: Caller, project: string, body: unknown): Promise<{ destination: PresentedDestination; warnings: string[] }> {
    const projectId = await this.project(caller, project, "update");
    const input = destinationInput(body);
    // The dispatcher names the credential by its own field; the request names it by its kind's.
    const credentialField = input.kind === "ghost" ? "admin_api_key" : "application_password";
    try {
      const created = await this.dispatcher.createDestination({ projectId, ...input });
      return { destination: presentDestination(created.destination!), warnings: [...created.warnings] };
    } catch (error) {
      // A request that adds a destination has no destination_id: a refusal naming no field is the body's.
      const errors = fieldErrorsOfRefusal("", error, "body");
      if (!errors) throw error;
      const { credential, ...others } = errors;
      throw validationError(credential ? { ...others, [credentialField]: credential } : others);
    }
  }

  async get(caller: Caller, project: string, destination: string): Promise<PresentedDestination> {
    const destinationId = this.destinationId(destination);
    const projectId = await this.project(caller, project, "view");
    return presentDestination((await this.dispatcher.getDestination({ projectId, destinationId })).destination!);
  }

  async check(caller: Caller, project: string, destination: string) {
    const destinationId = this.destinationId(destination);
    const projectId = await this.project(caller, project, "update");
    return presentCheck(await this.dispatcher.checkDestination({ projectId, destinationId }));
  }

  async delete(caller: Caller, project: string, destination: string): Promise<boolean> {
    const destinationId = this.destinationId(destination);
    const projectId = await this.project(caller, project, "update");
    return (await this.dispatcher.deleteDestination({ projectId, destinationId })).deleted;
  }

  /** Queues the article's publication; the article comes back with it recorded as queued. */
  async publish(caller: Caller, identifier: string, body: unknown): Promise<ArticleWithProject> {
    const { article, project } = await this.articles.get(caller, identifier, "update");
    const { destinationId, options, errors } = publishInput(body);
    if (Object.keys(errors).length > 0) throw validationError(errors);
    await asFieldErrors(() => this.dispatcher.publishArticle({ projectId: article.projectId, externalId: article.externalId, destinationId: BigInt(destinationId!), options }));
    const { article: queued } = await this.gate.clients.articles.getArticle({ identifier: article.externalId });
    return { article: queued!, project };
  }
}
