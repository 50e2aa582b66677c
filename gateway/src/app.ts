// Builds the gateway's Elysia app (no listen), so tests and main share it.
import type { RedisConnection } from "../../services/kit/src/redis.ts";
import { Elysia } from "elysia";
import { ConnectError } from "@connectrpc/connect";
import { HttpError, fromServiceError } from "./errors.ts";
import { jsonBody } from "./plugins/json-body.ts";
import { requestIdOf } from "./plugins/request-ids.ts";
import { protectiveHeaders, strictTransport } from "./plugins/protective-headers.ts";
import { requestLimits } from "./plugins/request-limits.ts";
import { RateLimiter } from "./plugins/rate-limiter.ts";
import { KeyResolver } from "./plugins/key-resolver.ts";
import { ProjectAuthorizer } from "./plugins/project-authorizer.ts";
import { ArticleMemory } from "./articles/article-memory.ts";
import { WorkflowMemory } from "./workflows/workflow-memory.ts";
import { ModelMemory } from "./articles/model-memory.ts";
import { ArticleEventHub } from "./articles/event-stream.ts";
import { ArchivedArticleEvents } from "./articles/archived-events.ts";
import { ArticleOperations } from "./articles/article-operations.ts";
import { OpenStreams } from "./articles/open-streams.ts";
import { WorkflowOperations } from "./workflows/workflow-operations.ts";
import { PublishingOperations } from "./publishing/publishing-operations.ts";
import type { V1Gate } from "./plugins/caller.ts";
import { userRoutes } from "./routes/user.ts";
import { articleRoutes } from "./routes/articles.ts";
import { articleVersionRoutes } from "./routes/article-versions.ts";
import { workflowRoutes } from "./routes/workflows.ts";
import { publishingRoutes } from "./routes/publishing.ts";
import { webhookEndpointRoutes } from "./routes/webhook-endpoints.ts";
import { EndpointOperations } from "./webhook-endpoints/endpoint-operations.ts";
import { imageRoutes } from "./routes/images.ts";
import { docsRoutes } from "./openapi/docs-routes.ts";
import type { ServiceClients } from "./services.ts";
// ---- usage and the dashboard ----
import { UsageOperations } from "./usage/usage-operations.ts";
import { usageRoutes } from "./routes/usage.ts";
import { dashboardApi } from "./dashboard/dashboard-api.ts";
import { dashboardPages } from "./dashboard/dashboard-pages.ts";
import { PASSWORD_RESET_REQUESTS, SIGN_UP_REQUESTS, SignInLimits } from "./dashboard/sign-in-limits.ts";
import { envOptional } from "../../services/kit/src/config.ts";
import { sessionMount } from "./dashboard/dashboard-session.ts";
// ---- end usage and the dashboard ----
import type { Logger } from "../../services/kit/src/logger.ts";

export interface GatewayDeps {
  clients: ServiceClients;
  redis: RedisConnection;
  /** A connection of its own for listening to article and workflow changes (subscriber mode). */
  subscriber: RedisConnection;
  redisPrefix: string;
  logger: Logger;
  /** What the gateway cannot serve without (Redis, its services); /healthz answers 503 while any is unreachable. */
  dependencies?: { unreachable(): string[] };
  /** The fan-out of article event streams; one per gateway process. */
  events?: ArticleEventHub;
  /** Whether the process is draining (SIGTERM): /readyz then answers 503. */
  draining?: () => boolean;
  /** Whether the process can take requests yet (its Redis connection has come up): /readyz answers 503 before. */
  started?: () => boolean;
}

function jsonResponse(status: number, body: unknown, headers: Record<string, unknown> = {}): Response {
  const out = new Headers();
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) out.set(k, String(v));
  out.set("content-type", "application/json; charset=utf-8");
  return new Response(JSON.stringify(body), { status, headers: out });
}

/** What the HTTP app and the gRPC API share: the gates and the operations behind both. */
export interface GatewayCore {
  gate: V1Gate;
  articles: ArticleOperations;
  workflows: WorkflowOperations;
  publishing: PublishingOperations;
  /** The usage report of GET /v1/usage and the dashboard. */
  usage: UsageOperations;
  /** A project's webhook endpoints. */
  endpoints: EndpointOperations;
}

export function gatewayCore(deps: GatewayDeps): GatewayCore {
  const gate: V1Gate = {
    clients: deps.clients,
    limiter: new RateLimiter(deps.redis, deps.redisPrefix),
    keys: new KeyResolver(deps.clients),
    projects: new ProjectAuthorizer(deps.clients),
    workflows: new WorkflowMemory(deps.redis, deps.subscriber, deps.redisPrefix, deps.logger),
    models: new ModelMemory(deps.subscriber, deps.redisPrefix, deps.logger),
  };
  const memory = new ArticleMemory(deps.subscriber, deps.redisPrefix, deps.logger);
  const archive = new ArchivedArticleEvents(deps.clients.articles);
  const events = deps.events ?? new ArticleEventHub(deps.redis, deps.redisPrefix, deps.logger, archive, (externalId) => memory.forgetEnded(externalId));
  const articles = new ArticleOperations(gate, memory, events, new OpenStreams(deps.redis, deps.redisPrefix, deps.logger), deps.logger);
  return { gate, articles, workflows: new WorkflowOperations(gate), publishing: new PublishingOperations(gate, articles), usage: new UsageOperations(gate), endpoints: new EndpointOperations(gate, deps.logger) };
}

/** /readyz: 503 until the process has started, and again once it drains. */
function readiness(deps: GatewayDeps) {
  if (deps.draining?.()) return jsonResponse(503, { message: "Draining." });
  if (deps.started?.() === false) return jsonResponse(503, { message: "Starting." });
  return { status: "ok" };
}

export function buildApp(deps: GatewayDeps, core: GatewayCore = gatewayCore(deps)) {
  const { gate } = core;
  return new Elysia()
    // Cache-Control, nosniff, frame-ancestors and HSTS on every answer, errors included.
    .wrap(protectiveHeaders({ hsts: strictTransport(process.env) }))
    .use(requestLimits)
    .use(jsonBody)
    .onError({ as: "global" }, ({ code, error: raised, set, request }) => {
      const headers = set.headers as Record<string, unknown>;
      // Bodies exactly in the spec's shapes (section 7); the request's id travels in its X-Request-Id header.
      const answer = (status: number, body: object, extra: Record<string, unknown> = headers) => jsonResponse(status, body, extra);
      // The body parser's own answers (413) arrive wrapped in the framework's parse error.
      const error = code === "PARSE" && (raised as Error).cause instanceof HttpError ? (raised as Error).cause : raised;
      if (error instanceof HttpError) return answer(error.status, error.body as object, { ...headers, ...error.headers });
      if (error instanceof ConnectError) {
        const mapped = fromServiceError(error);
        if (mapped.status >= 500) deps.logger.error("service call failed", { request_id: requestIdOf(request), path: new URL(request.url).pathname, code: error.code, error: error.rawMessage });
        return answer(mapped.status, mapped.body as object);
      }
      if (code === "NOT_FOUND") return answer(404, { message: "Not found." });
      if (code === "PARSE" || code === "VALIDATION") return answer(422, { message: "The given data was invalid.", errors: { body: ["The request body is not valid."] } });
      deps.logger.error("unhandled error", { request_id: requestIdOf(request), path: new URL(request.url).pathname, error: (error as Error).stack ?? String(error) });
      return answer(500, { message: "Server Error" });
    })
    // The reference page and the OpenAPI document (gateway/src/openapi): no CDN, one source of shapes.
    .use(docsRoutes())
    // Readiness: 503 (plain error shape) while Redis or a service does not answer.
    .get("/healthz", () => {
      const unreachable = deps.dependencies?.unreachable() ?? [];
      return unreachable.length ? jsonResponse(503, { message: `Not ready: ${unreachable.join(", ")} unreachable.` }) : { status: "ok" };
    }, { detail: { hide: true } })
    // Liveness: the process answers, whatever its dependencies do.
    .get("/livez", () => ({ status: "ok" }), { detail: { hide: true } })
    // Readiness for the load balancer: the gateway serves once started, whatever its dependencies
    // do later (a call that needs one that is away gets the API's JSON 503), until it starts draining.
    .get("/readyz", () => readiness(deps), { detail: { hide: true } })
    .use(userRoutes(gate.keys))
    .use(articleRoutes(gate, core.articles))
    .use(articleVersionRoutes(gate, core.articles))
    .use(workflowRoutes(gate, core.workflows))
    .use(publishingRoutes(gate, core.publishing))
    .use(webhookEndpointRoutes(gate, core.endpoints))
    .use(imageRoutes(deps.clients.images))
    // ---- usage and the dashboard: GET /v1/usage, the dashboard's page and its API ----
    .use(usageRoutes(gate, core.usage))
    .use(dashboardPages())
    .use(
      dashboardApi({
        gate,
        usage: core.usage,
        articles: core.articles,
        signInLimits: new SignInLimits(deps.redis, deps.redisPrefix),
        passwordResetLimits: new SignInLimits(deps.redis, deps.redisPrefix, PASSWORD_RESET_REQUESTS),
        signUpLimits: new SignInLimits(deps.redis, deps.redisPrefix, SIGN_UP_REQUESTS),
        signUpPlan: envOptional(process.env, "SIGNUP_PLAN"),
        publicHttps: strictTransport(process.env),
      }),
    )
    // The workflow, publishing, endpoint and article-version routes' own handlers, for a session on the dashboard's API.
    .use(workflowRoutes(gate, core.workflows, sessionMount(gate)))
    .use(publishingRoutes(gate, core.publishing, sessionMount(gate)))
    .use(webhookEndpointRoutes(gate, core.endpoints, sessionMount(gate)))
    .use(articleVersionRoutes(gate, core.articles, sessionMount(gate)));
}

export type GatewayApp = ReturnType<typeof buildApp>;
