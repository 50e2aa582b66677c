// What a granted team workload may call on the public gRPC API, by role. This table is the one
// source of the roles (docs/grpc.md describes it); each method of articles.api.v1 names the role
// that first grants it, and the type makes a method without an entry a compile error, so a new
// method is granted to nobody until it is placed here.
//   reader     reads: articles, their steps, events and estimates, workflows, destinations
//   writer     reader + creates, cancels, retries, edits, restores, revises sections of and deletes articles, changes and deletes workflows
//   publisher  reader + destinations (create, check, delete) and publishing, webhook endpoints
//              (create, change, delete, roll a secret, test, redeliver): where the content goes
import type { DescService } from "@bufbuild/protobuf";
import { ArticleService } from "../../../proto/gen/articles/api/v1/articles_pb.ts";
import { PublishingService } from "../../../proto/gen/articles/api/v1/publishing_pb.ts";
import { WorkflowService } from "../../../proto/gen/articles/api/v1/workflows_pb.ts";
import { WebhookEndpointService } from "../../../proto/gen/articles/api/v1/webhook_endpoints_pb.ts";

export const ROLES = ["reader", "writer", "publisher"] as const;
export type Role = (typeof ROLES)[number];

type MethodRoles<S extends DescService> = { [M in keyof S["method"]]: Role };

const article: MethodRoles<typeof ArticleService> = {
  getArticle: "reader",
  listArticles: "reader",
  getArticleSteps: "reader",
  watchArticle: "reader",
  // A price for an article not yet asked for: reads the plan and the catalogue, changes nothing.
  estimateArticle: "reader",
  createArticle: "writer",
  cancelArticle: "writer",
  // After generation: the history is read, edits and restores change the article.
  listArticleVersions: "reader",
  getArticleVersion: "reader",
  exportArticleContent: "reader",
  restoreArticleVersion: "writer",
  updateArticle: "writer",
  deleteArticle: "writer",
  retryArticle: "writer",
  reviseArticleSection: "writer",
  listArticleRevisions: "reader",
};

const workflow: MethodRoles<typeof WorkflowService> = {
  listWorkflows: "reader",
  getWorkflowStep: "reader",
  createWorkflowStep: "writer",
  updateWorkflowStep: "writer",
  deleteWorkflowStep: "writer",
  reorderWorkflowSteps: "writer",
  duplicateWorkflow: "writer",
};

const publishing: MethodRoles<typeof PublishingService> = {
  listDestinations: "reader",
  getDestination: "reader",
  // A check signs in to the customer's site with the stored credential: the publisher's to use.
  checkDestination: "publisher",
  createDestination: "publisher",
  deleteDestination: "publisher",
  publishArticle: "publisher",
};

const webhookEndpoints: MethodRoles<typeof WebhookEndpointService> = {
  listWebhookEndpoints: "reader",
  getWebhookEndpoint: "reader",
  listWebhookDeliveries: "reader",
  createWebhookEndpoint: "publisher",
  updateWebhookEndpoint: "publisher",
  deleteWebhookEndpoint: "publisher",
  rollWebhookEndpointSecret: "publisher",
  sendWebhookTestEvent: "publisher",
  redeliverWebhookDelivery: "publisher",
};

function entries<S extends DescService>(service: S, roles: MethodRoles<S>): [string, Role][] {
  return service.methods.map((m) => [`${service.typeName}/${m.name}`, (roles as Record<string, Role>)[m.localName]]);
}

/** Every public method (`articles.api.v1.ArticleService/GetArticle`) with the role that first grants it. */
export const METHOD_ROLES: ReadonlyMap<string, Role> = new Map([
  ...entries(ArticleService, article),
  ...entries(WorkflowService, workflow),
  ...entries(PublishingService, publishing),
  ...entries(WebhookEndpointService, webhookEndpoints),
]);

/** The methods a role grants: its own, and the reader's for the writer and the publisher. */
export function methodsOf(role: Role): string[] {
  return [...METHOD_ROLES].filter(([, first]) => first === role || first === "reader").map(([method]) => method);
}

/** A public method by its name alone (`GetArticle`) or its full path; undefined when there is none. */
export function publicMethod(name: string): string | undefined {
  if (METHOD_ROLES.has(name)) return name;
  return [...METHOD_ROLES.keys()].find((method) => method.endsWith(`/${name}`));
}
