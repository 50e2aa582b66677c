// The OpenAPI 3.1 document of the public API, built from the request field tables (the validators'
// own) and the response schemas. Served at /docs/json; clients/typescript is generated from it.
import type { TSchema } from "@sinclair/typebox";
import { ARTICLE_FIELDS } from "../articles/creation-request.ts";
import { ARTICLE_LIST_QUERY } from "../articles/reading.ts";
import { MAX_KEY_LENGTH, REPLAYED_HEADER } from "../articles/idempotency.ts";
import { REQUEST_LIMITS } from "../plugins/request-limits.ts";
import { DUPLICATE_FIELDS, REORDER_FIELDS, STEP_FIELDS, STEP_UPDATE_FIELDS, WORKFLOW_LIST_QUERY } from "../workflows/step-fields.ts";
import { objectSchema, queryParameters } from "./fields.ts";
import { DESTINATION_FIELDS, PUBLISH_FIELDS } from "../publishing/publish-input.ts";
import * as S from "./schemas.ts";
import { ArticleRevision, ArticleSection, ArticleVersion, VersionConflict } from "./version-schemas.ts";
import { REVISION_FIELDS } from "../articles/section-revisions.ts";
import { EDIT_FIELDS } from "../articles/article-versions.ts";
import { UsageReport } from "./usage-schemas.ts";
import { WebhookDelivery, WebhookEndpoint, WebhookEndpointCreate, WebhookEndpointUpdate, WebhookEndpointWithSecret } from "./webhook-endpoint-schemas.ts";

type Json = Record<string, unknown>;

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const resp = (name: string) => ({ $ref: `#/components/responses/${name}` });
const header = (name: string) => ({ $ref: `#/components/headers/${name}` });

/** Plain JSON of a TypeBox schema (its symbol keys dropped). */
const plain = (schema: TSchema): Json => JSON.parse(JSON.stringify(schema));

const SCHEMAS: Record<string, TSchema> = {
  Article: S.Article,
  Workflow: S.Workflow,
  Step: S.Step,
  User: S.User,
  Estimate: S.Estimate,
  StepBreakdown: S.StepBreakdown,
  PageMeta: S.PageMeta,
  ArticlePageMeta: S.ArticlePageMeta,
  GateError: S.GateError,
  PlainError: S.PlainError,
  ValidationError: S.ValidationError,
  ReorderRejection: S.ReorderRejection,
  VersionConflict: VersionConflict,
  Publication: S.Publication,
  Destination: S.Destination,
  DestinationCheck: S.DestinationCheck,
  DestinationCreate: objectSchema(DESTINATION_FIELDS, {
    description: "Body of POST /v1/projects/{project}/destinations: kind, name and site_url, and for WordPress username and application_password, for Ghost admin_api_key.",
  }),
  PublishRequest: objectSchema(PUBLISH_FIELDS, { description: "Body of POST /v1/articles/{id}/publish, and `publish` of a creation request." }),
  ArticleCreate: objectSchema(ARTICLE_FIELDS, {
    description: "Body of POST /v1/articles and POST /v1/articles/estimate.",
    examples: [{ project_id: 1, title: "How to brew pour-over coffee", article_type: "blog_post", target_word_count: 1500, tone: "friendly", point_of_view: "second_person", language: "en" }],
  }),
  StepCreate: objectSchema(STEP_FIELDS, { description: "Body of POST /v1/projects/{project}/workflows." }),
  StepUpdate: objectSchema(STEP_UPDATE_FIELDS, { description: "Body of PATCH or PUT /v1/projects/{project}/workflows/{workflow}: omitted fields are unchanged; null clears step_description, step_icon and json_schema." }),
  StepReorder: objectSchema(REORDER_FIELDS, { description: "Body of POST /v1/projects/{project}/workflows/reorder." }),
  WorkflowDuplicate: objectSchema(DUPLICATE_FIELDS, { description: "Body of POST /v1/projects/{project}/workflows/duplicate." }),
  ArticleVersion,
  ArticleRevision,
  ArticleSection,
  RevisionRequest: objectSchema(REVISION_FIELDS, { description: "Body of POST /v1/articles/{id}/revisions: the section (index or heading) and the action." }),
  ArticleEdit: objectSchema(EDIT_FIELDS, { description: "Body of PATCH /v1/articles/{id}: content, description or both; the base version by If-Match or base_version_id." }),
  ...Object.fromEntries(Object.entries(S.ArticleEvents).map(([event, schema]) => [`ArticleEvent_${event}`, schema])),
  // ---- usage ----
  UsageReport: UsageReport,
  // ---- webhook endpoints ----
  WebhookEndpoint,
  WebhookEndpointWithSecret,
  WebhookEndpointCreate,
  WebhookEndpointUpdate,
  WebhookDelivery,
};

/** One frame of the event stream: its fields as a client's EventSource hands them over. */
const ARTICLE_EVENT = {
  type: "object",
  description: "One Server-Sent Event (`id:`, `event:` and `data:` lines); data is JSON.",
  properties: {
    id: { type: "string", description: "Pass as Last-Event-ID to resume after this event.", examples: ["1718000000000-0"] },
    event: { type: "string", enum: Object.keys(S.ArticleEvents) },
    // anyOf: step_started's fields are a subset of step_finished's; the event name tells them apart.
    data: { anyOf: Object.keys(S.ArticleEvents).map((e) => ref(`ArticleEvent_${e}`)) },
  },
  required: ["id", "event", "data"],
};

/** The success envelope around `data` (and the optional message, the page, or the warnings of an accepted change). */
function envelope(data: Json | null, opts: { message?: "required" | "optional"; meta?: boolean | string; warnings?: string } = {}): Json {
  const properties: Json = { success: { type: "boolean", const: true } };
  const required = ["success"];
  if (data) {
    properties.data = data;
    required.push("data");
  }
  if (opts.message) {
    properties.message = { type: "string", description: opts.message === "optional" ? "Warnings about accepted prompts, when any." : "What happened." };
    if (opts.message === "required") required.push("message");
  }
  if (opts.meta) {
    properties.meta = ref(typeof opts.meta === "string" ? opts.meta : "PageMeta");
    required.push("meta");
  }
  if (opts.warnings) {
    properties.warnings = { type: "array", items: { type: "string" }, description: opts.warnings };
    required.push("warnings");
  }
  return { type: "object", properties, required };
}

const RATE_HEADERS = {
  "X-Request-Id": header("X-Request-Id"),
  "RateLimit-Limit": header("RateLimit-Limit"),
  "RateLimit-Remaining": header("RateLimit-Remaining"),
  "RateLimit-Reset": header("RateLimit-Reset"),
  "RateLimit-Policy": header("RateLimit-Policy"),
};

const ok = (description: string, schema: Json, extraHeaders: Json = {}) => ({
  description,
  headers: { ...RATE_HEADERS, ...extraHeaders },
  content: { "application/json": { schema } },
});

const body = (name: string, description: string) => ({ required: true, description, content: { "application/json": { schema: ref(name) } } });

/** The gate's answers every /v1 operation can give. */
const GATE = { "401": resp("Unauthenticated"), "402": resp("PaymentRequired"), "429": resp("RateLimited") };
const BODY_ERRORS = { "413": resp("BodyTooLarge"), "422": resp("ValidationFailed") };

const ID_PARAM = {
  name: "id",
  in: "path",
  required: true,
  description: "The article's numeric id or its external_id (UUID); anything else is 404.",
  schema: { type: "string", pattern: "^([1-9][0-9]{0,15}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$" },
  example: "0b8f8a4e-5b9c-4a59-9d1e-3c1f2f8a7d10",
};
const numericPath = (name: string, description: string) => ({
  name,
  in: "path",
  required: true,
  description: `${description} A positive integer; anything else is 404.`,
  schema: { type: "integer", minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
  example: 1,
});
const PROJECT_PARAM = numericPath("project", "The project id.");
const WORKFLOW_PARAM = numericPath("workflow", "The workflow step id.");

const articleTags = ["Articles"];
const workflowTags = ["Workflows"];
const publishingTags = ["Publishing"];
const DESTINATION_PARAM = numericPath("destination", "The destination id.");

interface Operation {
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  security?: unknown[];
  parameters?: unknown[];
  requestBody?: unknown;
  responses: Record<string, unknown>;
}

const PATHS: Record<string, Record<string, Operation>> = {
  "/v1/articles": {
    post: {
      operationId: "createArticle",
      summary: "Create an article and start its generation (Idempotency-Key supported)",
      description: "Answers 201 at once with the queued article; poll GET /v1/articles/{id} or follow /events. Reserves 120% of target_word_count against the monthly allowance.",
      tags: articleTags,
      parameters: [{ $ref: "#/components/parameters/IdempotencyKey" }],
      requestBody: body("ArticleCreate", "The article to generate."),
      responses: {
        "201": ok("Created (or, with a reused Idempotency-Key and the same body, the first answer again).", envelope(ref("Article"), { message: "required" }), {
          [REPLAYED_HEADER]: { description: "true when this repeats an earlier answer for the same Idempotency-Key.", schema: { type: "string", enum: ["true"] } },
        }),
        "403": resp("Forbidden"),
        "404": resp("NotFound"),
        ...BODY_ERRORS,
        ...GATE,
      },
    },
    get: {
      operationId: "listArticles",
      summary: "List articles of every project the caller can view, newest first",
      tags: articleTags,
      parameters: queryParameters(ARTICLE_LIST_QUERY),
      description:
        "Never refused for the spec's query values: a status outside the spec's values or a project the caller cannot view matches nothing (200 with `data: []`), and page and per_page are clamped (per_page at most 100). A `cursor` (meta.next_cursor) reads the page after the one that gave it at any depth in the time of page 1; one this list did not give is 422 on `cursor`.",
      responses: {
        "200": ok("A page of articles.", envelope({ type: "array", items: ref("Article") }, { meta: "ArticlePageMeta" })),
        "422": resp("ValidationFailed"),
        ...GATE,
      },
    },
  },
  "/v1/articles/estimate": {
    post: {
      operationId: "estimateArticle",
      summary: "Check a creation body as creation does and estimate its words and cost; creates and reserves nothing",
      tags: articleTags,
      requestBody: body("ArticleCreate", "The body POST /v1/articles would get."),
      responses: { "200": ok("The estimate.", envelope(ref("Estimate"))), "403": resp("Forbidden"), "404": resp("NotFound"), ...BODY_ERRORS, ...GATE },
    },
  },
  "/v1/articles/{id}": {
    get: {
      operationId: "getArticle",
      summary: "Retrieve an article by numeric id or external_id (poll this)",
      tags: articleTags,
      parameters: [ID_PARAM],
      responses: { "200": ok("The article.", envelope(ref("Article"))), "403": resp("Forbidden"), "404": resp("NotFound"), ...GATE },
    },
  },
  "/v1/articles/{id}/steps": {
    get: {
      operationId: "getArticleSteps",
      summary: "Cost breakdown of an article's run: each step, the research, the images and the finishing pass",
      tags: articleTags,
      parameters: [ID_PARAM],
      responses: { "200": ok("The breakdown.", envelope(ref("StepBreakdown"))), "403": resp("Forbidden"), "404": resp("NotFound"), ...GATE },
    },
  },
  "/v1/articles/{id}/events": {
    get: {
      operationId: "streamArticleEvents",
      summary: "Live progress as Server-Sent Events: state changes, steps, sources, images, then completed, published or failed (Last-Event-ID resumes)",
      description: `Each event is \`id\`, \`event\` (its name) and \`data\` (JSON). Names and data: ${Object.keys(S.ArticleEvents)
        .map((e) => `\`${e}\` (ArticleEvent_${e})`)
        .join(", ")}. The stream ends after the final event; a comment line is sent as a heartbeat.`,
      tags: articleTags,
      parameters: [
        ID_PARAM,
        { name: "Last-Event-ID", in: "header", required: false, description: "Resume after this event id (sent by EventSource on reconnect).", schema: { type: "string", pattern: "^[0-9]+-[0-9]+$" }, example: "1718000000000-0" },
      ],
      responses: {
        "200": {
          description: "An event stream.",
          headers: RATE_HEADERS,
          content: {
            "text/event-stream": {
              schema: ref("ArticleEvent"),
              example: { id: "1718000000000-0", event: "state", data: { status: "writing", current_step: "Draft", cost: "0.00" } },
            },
          },
        },
        "403": resp("Forbidden"),
        "404": resp("NotFound"),
        "422": resp("ValidationFailed"),
        ...GATE,
      },
    },
  },
  "/v1/articles/{id}/cancel": {
    post: {
      operationId: "cancelArticle",
      summary: "Cancel a queued, batching, writing or polishing article: it fails, unfinished words are given back, no webhook; on a finished article, its section revision under way (422 once ended otherwise)",
      tags: articleTags,
      parameters: [ID_PARAM],
      responses: { "200": ok("The cancelled article.", envelope(ref("Article"), { message: "required" })), "403": resp("Forbidden"), "404": resp("NotFound"), "422": resp("ValidationFailed"), ...GATE },
    },
  },
  "/v1/articles/{id}/publish": {
    post: {
      operationId: "publishArticle",
      summary: "Publish (or publish again) a finished article to a destination of its project, as a queued job",
      description:
        "Answers 202 with the article, its publication to that destination queued. The job uploads the article's images to the site's media library (the first as featured image), posts the title, the body as HTML, the description as excerpt and the slug, and records the outcome and every attempt in `publications` and as `publication` events. Publishing again updates the same post. Needs update access.",
      tags: publishingTags,
      parameters: [ID_PARAM],
      requestBody: body("PublishRequest", "Where and how to publish."),
      responses: { "202": ok("The article, its publication queued.", envelope(ref("Article"), { message: "required" })), "403": resp("Forbidden"), "404": resp("NotFound"), ...BODY_ERRORS, ...GATE },
    },
  },
  "/v1/projects/{project}/destinations": {
    get: {
      operationId: "listDestinations",
      summary: "List the project's publishing destinations (never their credentials)",
      tags: publishingTags,
      parameters: [PROJECT_PARAM],
      responses: { "200": ok("The destinations, oldest first.", envelope({ type: "array", items: ref("Destination") })), "403": resp("Forbidden"), "404": resp("NotFound"), ...GATE },
    },
    post: {
      operationId: "createDestination",
      summary: "Add a WordPress or Ghost destination; its credential is write-only",
      description:
        "The site is asked first, with the credential: when it refuses the credential (a wrong password and an unknown WordPress user alike) the answer is 422 naming `application_password` / `admin_api_key` and nothing is added; an address the site's answer rules out (a REST API announced on another origin, an address the guard refuses) is 422 on `site_url`. A site that cannot be reached within 10 s, or whose answer shows another problem (the user may not publish, no REST API found), still gets its destination: 201 with `warnings`. Outside development (`ALLOW_PRIVATE_URLS`) `site_url` must be `https://`. The credential is stored encrypted and never returned or logged. Needs update access. POST …/check tries it again later.",
      tags: publishingTags,
      parameters: [PROJECT_PARAM],
      requestBody: body("DestinationCreate", "The site and its credential."),
      responses: {
        "201": ok(
          "The destination, and what the first contact with the site found amiss without refusing it.",
          envelope(ref("Destination"), { warnings: "Additive: one sentence per problem the site's first contact showed without refusing the destination (e.g. the site could not be reached); empty when all is well." }),
        ),
        "403": resp("Forbidden"),
        "404": resp("NotFound"),
        ...BODY_ERRORS,
        ...GATE,
      },
    },
  },
  "/v1/projects/{project}/destinations/{destination}": {
    get: {
      operationId: "getDestination",
      summary: "Retrieve one destination",
      tags: publishingTags,
      parameters: [PROJECT_PARAM, DESTINATION_PARAM],
      responses: { "200": ok("The destination.", envelope(ref("Destination"))), "403": resp("Forbidden"), "404": resp("NotFound"), ...GATE },
    },
    delete: {
      operationId: "deleteDestination",
      summary: "Delete a destination and its credential (posts already published stay)",
      tags: publishingTags,
      parameters: [PROJECT_PARAM, DESTINATION_PARAM],
      responses: { "200": ok("Deleted (or there was nothing to delete).", envelope(null, { message: "required" })), "403": resp("Forbidden"), "404": resp("NotFound"), ...GATE },
    },
  },
  "/v1/projects/{project}/destinations/{destination}/check": {
    post: {
      operationId: "checkDestination",
      summary: "Check the connection: site reachable, credentials accepted, allowed to create posts",
      description: "A failed check is a 200 with ok false and the problems in sentences. Needs update access (it uses the stored credential).",
      tags: publishingTags,
      parameters: [PROJECT_PARAM, DESTINATION_PARAM],
      responses: { "200": ok("What the site said.", envelope(ref("DestinationCheck"))), "403": resp("Forbidden"), "404": resp("NotFound"), ...GATE },
    },
  },
  "/v1/projects/{project}/workflows": {
    get: {
      operationId: "listWorkflows",
      summary: "List the project's custom workflows with their steps",
      tags: workflowTags,
      parameters: [PROJECT_PARAM, ...queryParameters(WORKFLOW_LIST_QUERY)],
      responses: { "200": ok("A page of workflows.", envelope({ type: "array", items: ref("Workflow") }, { meta: true })), "403": resp("Forbidden"), "404": resp("NotFound"), ...GATE },
    },
    post: {
      operationId: "createWorkflowStep",
      summary: "Create a workflow step (the first step of a new article_type creates the workflow)",
      tags: workflowTags,
      parameters: [PROJECT_PARAM],
      requestBody: body("StepCreate", "The step."),
      responses: { "201": ok("The created step.", envelope(ref("Step"), { message: "optional" })), "403": resp("Forbidden"), "404": resp("NotFound"), ...BODY_ERRORS, ...GATE },
    },
  },
  "/v1/projects/{project}/workflows/reorder": {
    post: {
      operationId: "reorderWorkflowSteps",
      summary: "Renumber several steps at once",
      tags: workflowTags,
      parameters: [PROJECT_PARAM],
      requestBody: body("StepReorder", "The new positions."),
      responses: {
        "200": ok("Reordered.", envelope(null, { message: "required" })),
        "403": resp("Forbidden"),
        "404": resp("NotFound"),
        "413": resp("BodyTooLarge"),
        "422": {
          description: "Validation failed, or a step of another project was named (then `{success: false, message}`).",
          content: { "application/json": { schema: { oneOf: [ref("ValidationError"), ref("ReorderRejection")] } } },
        },
        ...GATE,
      },
    },
  },
  "/v1/projects/{project}/workflows/duplicate": {
    post: {
      operationId: "duplicateWorkflow",
      summary: "Copy a custom or built-in workflow into a new custom type",
      tags: workflowTags,
      parameters: [PROJECT_PARAM],
      requestBody: body("WorkflowDuplicate", "What to copy, and the new type."),
      responses: { "201": ok("The new workflow with its copied steps.", envelope(ref("Workflow"))), "403": resp("Forbidden"), "404": resp("NotFound"), ...BODY_ERRORS, ...GATE },
    },
  },
  "/v1/projects/{project}/workflows/{workflow}": {
    get: {
      operationId: "getWorkflowStep",
      summary: "Retrieve a workflow step with its prompts",
      tags: workflowTags,
      parameters: [PROJECT_PARAM, WORKFLOW_PARAM],
      responses: { "200": ok("The step.", envelope(ref("Step"))), "403": resp("Forbidden"), "404": resp("NotFound"), ...GATE },
    },
    patch: {
      operationId: "updateWorkflowStep",
      summary: "Update a workflow step (same as PUT)",
      tags: workflowTags,
      parameters: [PROJECT_PARAM, WORKFLOW_PARAM],
      requestBody: body("StepUpdate", "The fields to change."),
      responses: { "200": ok("The updated step.", envelope(ref("Step"), { message: "optional" })), "403": resp("Forbidden"), "404": resp("NotFound"), ...BODY_ERRORS, ...GATE },
    },
    put: {
      operationId: "replaceWorkflowStep",
      summary: "Update a workflow step (same as PATCH)",
      tags: workflowTags,
      parameters: [PROJECT_PARAM, WORKFLOW_PARAM],
      requestBody: body("StepUpdate", "The fields to change."),
      responses: { "200": ok("The updated step.", envelope(ref("Step"), { message: "optional" })), "403": resp("Forbidden"), "404": resp("NotFound"), ...BODY_ERRORS, ...GATE },
    },
    delete: {
      operationId: "deleteWorkflowStep",
      summary: "Delete a workflow step (the last step deletes the workflow)",
      tags: workflowTags,
      parameters: [PROJECT_PARAM, WORKFLOW_PARAM],
      responses: { "200": ok("Deleted.", envelope(null, { message: "required" })), "403": resp("Forbidden"), "404": resp("NotFound"), ...GATE },
    },
  },
  // ---- usage ----
  "/v1/usage": {
    get: {
      operationId: "getUsage",
      summary: "The account's words this month (allowance, settled, reserved, remaining), per day and per hour by project and key, and its rate-limit windows",
      description: "Numbers are the word quota ledger's, as article creation counts them. A reservation counts in the day and hour its article was created. The endpoint has its own rate-limit bucket (usage).",
      tags: ["Usage"],
      responses: { "200": ok("The usage report.", envelope(ref("UsageReport"))), "403": resp("Forbidden"), ...GATE },
    },
  },
  // ---- end usage ----
  "/user": {
    get: {
      operationId: "getUser",
      summary: "The user behind the API key",
      description: "Outside /v1: no subscription gate, no rate limit, and the user record unwrapped (no envelope).",
      tags: ["User"],
      responses: {
        "200": { description: "The user.", content: { "application/json": { schema: ref("User") } } },
        "401": { description: "No valid API key.", content: { "application/json": { schema: ref("PlainError"), example: { message: "Unauthenticated." } } } },
        "403": resp("Forbidden"),
      },
    },
  },
  "/images/{file}": {
    get: imageOperation("getImage"),
    head: imageOperation("headImage"),
  },
  "/healthz": {
    get: {
      operationId: "readiness",
      summary: "Readiness: 503 while Redis or a service does not answer",
      tags: ["Health"],
      security: [],
      responses: {
        "200": { description: "Ready.", content: { "application/json": { schema: { type: "object", properties: { status: { type: "string", const: "ok" } }, required: ["status"] } } } },
        "503": { description: "Not ready; the message names what is unreachable.", content: { "application/json": { schema: ref("PlainError") } } },
      },
    },
  },
  "/readyz": {
    get: {
      operationId: "serving",
      summary: "Serving (the load balancer's readiness): 200 while the gateway serves, whatever its dependencies do; 503 once it drains",
      tags: ["Health"],
      security: [],
      responses: {
        "200": { description: "Serving.", content: { "application/json": { schema: { type: "object", properties: { status: { type: "string", const: "ok" } }, required: ["status"] } } } },
        "503": { description: "Draining: the process is stopping.", content: { "application/json": { schema: ref("PlainError") } } },
      },
    },
  },
  "/livez": {
    get: {
      operationId: "liveness",
      summary: "Liveness: the process answers, whatever its dependencies do",
      tags: ["Health"],
      security: [],
      responses: { "200": { description: "Alive.", content: { "application/json": { schema: { type: "object", properties: { status: { type: "string", const: "ok" } }, required: ["status"] } } } } },
    },
  },
};

function imageOperation(operationId: string): Operation {
  return {
    operationId,
    summary: "An article image by the URL its content links to (no API key)",
    description: "Images never change: cached for a year as immutable, with an ETag (If-None-Match answers 304).",
    tags: ["Images"],
    security: [],
    parameters: [
      { name: "file", in: "path", required: true, description: "The image id (32 hex digits) and its extension.", schema: { type: "string", pattern: "^[0-9a-f]{32}\\.[a-z]{3,4}$" }, example: "9f86d081884c7d659a2feaa0c55ad015.png" },
      { name: "If-None-Match", in: "header", required: false, description: "An ETag from an earlier answer.", schema: { type: "string" } },
    ],
    responses: {
      "200": {
        description: "The image bytes.",
        headers: {
          ETag: { description: "The image's SHA-256, quoted.", schema: { type: "string" } },
          "Cache-Control": { description: "public, max-age=31536000, immutable", schema: { type: "string" } },
        },
        content: { "image/*": { schema: { type: "string", contentMediaType: "image/*" } } },
      },
      "304": { description: "Not modified (the If-None-Match ETag matches)." },
      "404": resp("NotFound"),
    },
  };
}

const errorResponse = (description: string, schema: string, example: Json, headers: Json = {}) => ({
  description,
  headers: { "X-Request-Id": header("X-Request-Id"), ...headers },
  content: { "application/json": { schema: ref(schema), example } },
});

const COMPONENTS = {
  securitySchemes: {
    bearerAuth: { type: "http", scheme: "bearer", description: "An API key: `Authorization: Bearer <ACCESS_TOKEN>`." },
  },
  parameters: {
    IdempotencyKey: {
      name: "Idempotency-Key",
      in: "header",
      required: false,
      description: `Makes a retried creation safe: the same key with the same body answers the first response again (Idempotent-Replayed: true); with a different body, 422. 1 to ${MAX_KEY_LENGTH} visible ASCII characters; a UUID is a good choice.`,
      schema: { type: "string", minLength: 1, maxLength: MAX_KEY_LENGTH, pattern: "^[\\x21-\\x7e]+$" },
      example: "5f0c6c1e-6a53-4b7c-a1c4-0d6f1a2b3c4d",
    },
  },
  headers: {
    "X-Request-Id": {
      description: "The request's id, on every answer (errors included; never in a body): the client's own when it sent a usable one, else a new UUID. Quote it to support.",
      schema: { type: "string" },
      example: "3f1c2a9e-8d0b-4a57-9b1e-2f6f8b8f0c11",
    },
    "RateLimit-Limit": { description: "Requests allowed in the tightest window.", schema: { type: "integer" } },
    "RateLimit-Remaining": { description: "Requests left in that window.", schema: { type: "integer" } },
    "RateLimit-Reset": { description: "Seconds until that window resets.", schema: { type: "integer" } },
    "RateLimit-Policy": { description: "Every window as limit;w=seconds (minute, hour, day).", schema: { type: "string" }, example: "60;w=60, 1000;w=3600, 10000;w=86400" },
    "Retry-After": { description: "Seconds to wait before retrying.", schema: { type: "integer" } },
  },
  responses: {
    Unauthenticated: errorResponse("Missing, malformed, expired or revoked key.", "GateError", { error: "Unauthenticated", message: "Unauthenticated.", code: "UNAUTHENTICATED" }),
    PaymentRequired: errorResponse("The account has no active subscription.", "GateError", { error: "Payment Required", message: "An active subscription is required.", code: "NO_ACTIVE_SUBSCRIPTION" }),
    RateLimited: errorResponse(
      "A minute, hour or day window is full; retry after retry_after seconds.",
      "GateError",
      { error: "Too Many Requests", message: "Too many requests.", code: "RATE_LIMIT_EXCEEDED", retry_after: 30 },
      { "Retry-After": header("Retry-After"), ...RATE_HEADERS },
    ),
    Forbidden: errorResponse("Not authorised for the project, or the user is disabled.", "PlainError", { message: "This action is unauthorized." }),
    NotFound: errorResponse("No such resource, or not visible to the account.", "PlainError", { message: "Not found." }),
    BodyTooLarge: errorResponse(`The request body is larger than ${REQUEST_LIMITS.bodyBytes / 1024} KiB.`, "PlainError", { message: `The request body is larger than ${REQUEST_LIMITS.bodyBytes / 1024} KiB.` }),
    ValidationFailed: errorResponse("Validation failed: messages per field.", "ValidationError", {
      message: "The title field must be at least 3 characters. (and 1 more error)",
      errors: { title: ["The title field must be at least 3 characters."], tone: ["The selected tone is invalid. Allowed: professional, authoritative, friendly, conversational, casual, excited, humorous."] },
    }),
  },
};

// ---- After generation: versions, restores and edits ----

const VERSION_PARAM = numericPath("version", "The version's number within the article (1 is the generation output).");
const IF_MATCH = (required: string) => ({
  name: "If-Match",
  in: "header",
  required: false,
  description: `The article's ETag as GET answered it (its current_version_id, quoted): the version the change was made on. ${required}`,
  schema: { type: "string" },
  example: '"42"',
});
const ETAG_HEADER = { ETag: { description: "The article's ETag: its current_version_id, quoted. Send it as If-Match to change the article.", schema: { type: "string" } } };
const CONFLICT = errorResponse("The base version is no longer current (another change came first), or the article is not completed or published: nothing changed.", "VersionConflict", {
  message: "The article changed: version 41 is no longer current; its current version is 42.",
  current_version_id: 42,
  status: "completed",
});

const VERSION_PATHS: Record<string, Record<string, Operation>> = {
  "/v1/articles/{id}": {
    delete: {
      operationId: "deleteArticle",
      summary: "Delete an article and erase its data everywhere; an erasure record without content stays for billing",
      description:
        "Cancels a running article, gives back the words still reserved, and erases its content, versions, events, sources, images (the stored files too), delivery records and queued deliveries in every service. The article then answers 404 by id and external_id and is absent from lists; an erasure record without content stays (ids, account, project, words billed, when, by which key). Posts already on WordPress or Ghost stay, unless unpublish=true: then the posts the article's publications made are deleted first (WordPress: deleted for good, not trashed; Ghost: deleted through the Admin API), and a site that fails answers 502 with nothing erased (send the delete again). A repeat answers the same. Needs update access.",
      tags: articleTags,
      parameters: [ID_PARAM, { name: "unpublish", in: "query", required: false, description: "true: delete the article's posts on WordPress and Ghost too (default false: they stay).", schema: { type: "string", enum: ["false", "true"] } }],
      responses: {
        "200": ok("Deleted (or deleted before).", envelope(null, { message: "required" })),
        "403": resp("Forbidden"),
        "404": resp("NotFound"),
        "409": CONFLICT,
        "422": resp("ValidationFailed"),
        "502": errorResponse("A site the article was published to could not delete its post (unpublish=true): nothing was erased.", "PlainError", { message: "The post on https://blog.example.com could not be removed (…); delete the article again, or without unpublish." }),
        ...GATE,
      },
    },
    patch: {
      operationId: "updateArticle",
      summary: "Edit the content and description of a completed or published article as a new version (If-Match or base_version_id; 409 when stale)",
      description:
        "Makes a new immutable version from the body and makes it current: content (markdown; inside a JSON envelope's article.content when the article has one) and description. The title stays as submitted; the H1 inside content is the editable headline. Status, current_step, original_content and published_version_id never change (a published article stays published, its current_version_id then differs from published_version_id); no webhook is sent, and the change costs no words. actual_word_count and the sources' cited flags follow the new text; ai_detection_score and quality are null for a changed text until it is checked (an edit of the description alone keeps them). Needs update access.",
      tags: articleTags,
      parameters: [ID_PARAM, IF_MATCH("Either this or base_version_id is required.")],
      requestBody: body("ArticleEdit", "What changes."),
      responses: {
        "200": ok("The article, the new version current.", envelope(ref("Article"), { message: "required" }), ETAG_HEADER),
        "403": resp("Forbidden"),
        "404": resp("NotFound"),
        "409": CONFLICT,
        ...BODY_ERRORS,
        ...GATE,
      },
    },
  },
  "/v1/articles/{id}/retry": {
    post: {
      operationId: "retryArticle",
      summary: "Retry a failed (or cancelled) article: queued again, resuming from the step that failed without re-running or re-billing finished steps",
      description:
        "Moves a failed article (a cancelled one included) to queued, a transition beyond the spec's, with the same id and external_id, and resumes on the workflow revision it started with from the step that failed: finished steps are neither called nor billed again. 120% of target_word_count is held again (422 on target_word_count when the allowance cannot cover it, counting what the failed run had settled as given back); the retried run's settlement replaces the failed run's, so no word is billed twice. The earlier failure (reason, step) is recorded and written as a `retried` event. The completion webhook follows the spec's rules. 409 unless the article is failed. Needs update access.",
      tags: articleTags,
      parameters: [ID_PARAM],
      responses: { "200": ok("The article, queued.", envelope(ref("Article"), { message: "required" })), "403": resp("Forbidden"), "404": resp("NotFound"), "409": CONFLICT, "422": resp("ValidationFailed"), ...GATE },
    },
  },
  "/v1/articles/{id}/revisions": {
    post: {
      operationId: "reviseArticleSection",
      summary: "Rewrite, expand, shorten, regenerate, translate or humanize one H2 section of a completed or published article, as a new version where only that section changed",
      description:
        "Queues a section revision on the generation-runner (fair share, provider pacing, checkpoints, as an article's run), which reuses the article's research and sources without searching again. `section` names an H2 section by its index from 1 or its heading text, as GET /v1/articles/{id}/revisions lists them. 120% of target_words (else of the section's current word count) is held against the monthly allowance (422 on target_words when it cannot be covered) and the words written are settled. It ends in a new version (kind section_rewrite, recording the section, action, instruction and key) where only the text between that H2 and the next one changed: every other byte is identical. Its model call is listed in GET /v1/articles/{id}/steps under finishing as `revision N: …`. Status and current_step never change, no webhook is sent; the new version is a `version_created` event on the article's stream. 409 when the article is not completed or published, or another revision of it is queued or running. Needs update access.",
      tags: articleTags,
      parameters: [ID_PARAM, { $ref: "#/components/parameters/IdempotencyKey" }],
      requestBody: body("RevisionRequest", "The section and what to do with it."),
      responses: {
        "202": ok("Queued (or, with a reused Idempotency-Key and the same body, the first answer again).", envelope(ref("ArticleRevision"), { message: "required" }), {
          [REPLAYED_HEADER]: { description: "true when this repeats an earlier answer for the same Idempotency-Key.", schema: { type: "string", enum: ["true"] } },
        }),
        "403": resp("Forbidden"),
        "404": resp("NotFound"),
        "409": CONFLICT,
        ...BODY_ERRORS,
        ...GATE,
      },
    },
    get: {
      operationId: "listArticleRevisions",
      summary: "The article's H2 sections (what a revision names) and its section revisions, newest first",
      tags: articleTags,
      parameters: [ID_PARAM],
      responses: {
        "200": ok(
          "The current content's sections and the revisions.",
          envelope({ type: "object", required: ["sections", "revisions"], properties: { sections: { type: "array", items: ref("ArticleSection") }, revisions: { type: "array", items: ref("ArticleRevision") } } }),
        ),
        "403": resp("Forbidden"),
        "404": resp("NotFound"),
        ...GATE,
      },
    },
  },
  "/v1/articles/{id}/versions": {
    get: {
      operationId: "listArticleVersions",
      summary: "The article's versions, oldest first: generation, humanization, edits and restores",
      tags: articleTags,
      parameters: [ID_PARAM],
      responses: { "200": ok("The versions, without their contents.", envelope({ type: "array", items: ref("ArticleVersion") }), ETAG_HEADER), "403": resp("Forbidden"), "404": resp("NotFound"), ...GATE },
    },
  },
  "/v1/articles/{id}/versions/{version}": {
    get: {
      operationId: "getArticleVersion",
      summary: "One version of the article by its number, with its content, description and sources",
      tags: articleTags,
      parameters: [ID_PARAM, VERSION_PARAM],
      responses: { "200": ok("The version with its content.", envelope(ref("ArticleVersion"))), "403": resp("Forbidden"), "404": resp("NotFound"), ...GATE },
    },
  },
  "/v1/articles/{id}/content": {
    get: {
      operationId: "exportArticleContent",
      summary: "The current content as markdown, sanitised HTML, plain text or schema.org JSON-LD",
      description:
        "markdown: the body as stored (a JSON envelope's article.content); html: the completion webhook's content.html, rendered and sanitised the same way; text: the words of that HTML, a blank line between blocks; jsonld: schema.org structured data, an `@graph` of an Article (headline: the H1, else the title; description, dates, images, keywords, the cited sources as citation) and, when the body has an FAQ section, a FAQPage of its questions. 409 for an article without content yet.",
      tags: articleTags,
      parameters: [
        ID_PARAM,
        { name: "format", in: "query", required: false, description: "markdown (default), html, text or jsonld; anything else is 422.", schema: { type: "string", enum: ["markdown", "html", "text", "jsonld"], default: "markdown" } },
      ],
      responses: {
        "200": {
          description: "The content, in the media type of its format.",
          headers: { ...RATE_HEADERS, ...ETAG_HEADER },
          content: {
            "text/markdown": { schema: { type: "string" } },
            "text/html": { schema: { type: "string" } },
            "text/plain": { schema: { type: "string" } },
            "application/ld+json": { schema: { type: "object", required: ["@context", "@graph"], properties: { "@context": { const: "https://schema.org" }, "@graph": { type: "array", items: { type: "object", required: ["@type"] } } } } },
          },
        },
        "403": resp("Forbidden"),
        "404": resp("NotFound"),
        "409": CONFLICT,
        "422": resp("ValidationFailed"),
        ...GATE,
      },
    },
  },
  "/v1/articles/{id}/versions/{version}/restore": {
    post: {
      operationId: "restoreArticleVersion",
      summary: "Make an earlier version current again, as a new version (If-Match optional; 409 when stale)",
      description: "The new version (kind restored) has the earlier one's content, description, sources, checks and score. Status and published_version_id stay; no webhook. Needs update access.",
      tags: articleTags,
      parameters: [ID_PARAM, VERSION_PARAM, IF_MATCH("Optional: without it the restore applies to whatever version is current.")],
      responses: { "200": ok("The article, the restored text current.", envelope(ref("Article"), { message: "required" }), ETAG_HEADER), "403": resp("Forbidden"), "404": resp("NotFound"), "409": CONFLICT, ...GATE },
    },
  },
};

const endpointTags = ["Webhook endpoints"];
const ENDPOINT_PARAM = { name: "endpoint", in: "path", required: true, description: "The endpoint id (we_…).", schema: { type: "string", pattern: "^we_" } };
const DELIVERY_PARAM = numericPath("delivery", "The delivery id.");
const ENDPOINT_ERRORS = { "403": resp("Forbidden"), "404": resp("NotFound"), ...GATE };

const ENDPOINT_PATHS: Record<string, Record<string, Operation>> = {
  "/v1/projects/{project}/webhook-endpoints": {
    get: {
      operationId: "listWebhookEndpoints",
      summary: "List the project's webhook endpoints (never their secrets)",
      tags: endpointTags,
      parameters: [PROJECT_PARAM],
      responses: { "200": ok("The endpoints, oldest first.", envelope({ type: "array", items: ref("WebhookEndpoint") })), ...ENDPOINT_ERRORS },
    },
    post: {
      operationId: "createWebhookEndpoint",
      summary: "Add a webhook endpoint; the answer carries its signing secret, shown this once",
      description:
        "Beyond the spec: the endpoint receives the events it subscribes to, as `{type, timestamp, data}` JSON signed with its own Standard Webhooks secret (webhook-id, webhook-timestamp, webhook-signature headers), with the completion webhook's retry schedule, each attempt in its delivery log. The per-article webhook_url is apart and keeps the spec's rules. At most 20 endpoints per project. Needs update access.",
      tags: endpointTags,
      parameters: [PROJECT_PARAM],
      requestBody: body("WebhookEndpointCreate", "The endpoint."),
      responses: { "201": ok("The endpoint and its secret.", envelope(ref("WebhookEndpointWithSecret"))), ...BODY_ERRORS, ...ENDPOINT_ERRORS },
    },
  },
  "/v1/projects/{project}/webhook-endpoints/{endpoint}": {
    get: {
      operationId: "getWebhookEndpoint",
      summary: "Retrieve one webhook endpoint",
      tags: endpointTags,
      parameters: [PROJECT_PARAM, ENDPOINT_PARAM],
      responses: { "200": ok("The endpoint.", envelope(ref("WebhookEndpoint"))), ...ENDPOINT_ERRORS },
    },
    patch: {
      operationId: "updateWebhookEndpoint",
      summary: "Change an endpoint's url, description, events or enabled",
      tags: endpointTags,
      parameters: [PROJECT_PARAM, ENDPOINT_PARAM],
      requestBody: body("WebhookEndpointUpdate", "The fields to change."),
      responses: { "200": ok("The endpoint.", envelope(ref("WebhookEndpoint"))), ...BODY_ERRORS, ...ENDPOINT_ERRORS },
    },
    delete: {
      operationId: "deleteWebhookEndpoint",
      summary: "Delete a webhook endpoint and its delivery log",
      tags: endpointTags,
      parameters: [PROJECT_PARAM, ENDPOINT_PARAM],
      responses: { "200": ok("Deleted (or there was nothing to delete).", envelope(null, { message: "required" })), ...ENDPOINT_ERRORS },
    },
  },
  "/v1/projects/{project}/webhook-endpoints/{endpoint}/roll-secret": {
    post: {
      operationId: "rollWebhookEndpointSecret",
      summary: "Replace the endpoint's signing secret; the new one is shown this once",
      description: "The old secret stops signing at once. Needs update access.",
      tags: endpointTags,
      parameters: [PROJECT_PARAM, ENDPOINT_PARAM],
      responses: { "200": ok("The endpoint and its new secret.", envelope(ref("WebhookEndpointWithSecret"))), ...ENDPOINT_ERRORS },
    },
  },
  "/v1/projects/{project}/webhook-endpoints/{endpoint}/test": {
    post: {
      operationId: "sendWebhookTestEvent",
      summary: "Queue a webhook.test event to the endpoint",
      description: "Sent whatever the endpoint subscribes to, signed as any delivery. Needs update access.",
      tags: endpointTags,
      parameters: [PROJECT_PARAM, ENDPOINT_PARAM],
      responses: { "202": ok("The test delivery, its attempt to come.", envelope(ref("WebhookDelivery"), { message: "required" })), ...ENDPOINT_ERRORS },
    },
  },
  "/v1/projects/{project}/webhook-endpoints/{endpoint}/deliveries": {
    get: {
      operationId: "listWebhookDeliveries",
      summary: "The endpoint's deliveries, newest first, each with its attempts (time, status, latency, response excerpt)",
      tags: endpointTags,
      parameters: [
        PROJECT_PARAM,
        ENDPOINT_PARAM,
        { name: "limit", in: "query", required: false, description: "1 to 100 (20 when omitted).", schema: { type: "integer", minimum: 1, maximum: 100 } },
        { name: "before", in: "query", required: false, description: "Deliveries older than this id: the previous page's next_before.", schema: { type: "integer", minimum: 1 } },
      ],
      responses: {
        "200": ok("A page of deliveries.", {
          type: "object",
          properties: { success: { type: "boolean", const: true }, data: { type: "array", items: ref("WebhookDelivery") }, next_before: { type: ["integer", "null"], description: "Pass as before for the next page; null on the last." } },
          required: ["success", "data", "next_before"],
        }),
        "422": resp("ValidationFailed"),
        ...ENDPOINT_ERRORS,
      },
    },
  },
  "/v1/projects/{project}/webhook-endpoints/{endpoint}/deliveries/{delivery}/redeliver": {
    post: {
      operationId: "redeliverWebhookDelivery",
      summary: "Queue one more attempt of a delivery (same body, same webhook-id)",
      description: "One attempt, not retried, logged as a redelivery. Needs update access.",
      tags: endpointTags,
      parameters: [PROJECT_PARAM, ENDPOINT_PARAM, DELIVERY_PARAM],
      responses: { "202": ok("The delivery as it stood, one more attempt queued.", envelope(ref("WebhookDelivery"), { message: "required" })), ...ENDPOINT_ERRORS },
    },
  },
};

/** The paths, with each later block's operations added to the paths they share. */
function allPaths(...blocks: Record<string, Record<string, Operation>>[]): Record<string, Record<string, Operation>> {
  const paths: Record<string, Record<string, Operation>> = {};
  for (const block of blocks) for (const [path, operations] of Object.entries(block)) paths[path] = { ...paths[path], ...operations };
  return paths;
}

/** The whole document (a fresh object each call). */
export function openApiDocument(): Json {
  return {
    openapi: "3.1.0",
    info: {
      title: "Article Generation Service",
      version: "1.0.0",
      description: "Generates long-form articles through multi-step AI pipelines. Create an article, then poll it (or follow its events) until it is completed or failed.",
      license: { name: "Apache 2.0", identifier: "Apache-2.0" },
    },
    // Relative: the document is served by the gateway it describes (npm start: http://localhost:8080).
    servers: [{ url: "/", description: "The gateway serving this document" }],
    security: [{ bearerAuth: [] }],
    tags: [
      { name: "Articles", description: "Create, estimate, read, follow and cancel articles." },
      { name: "Workflows", description: "A project's custom workflows and their steps." },
      { name: "Publishing", description: "A project's WordPress and Ghost destinations, and publishing articles to them (beyond the spec)." },
      { name: "Webhook endpoints", description: "A project's webhook endpoints: event filters, signing secrets, test events, the delivery log and redelivery (beyond the spec)." },
      { name: "User", description: "The user behind the API key." },
      { name: "Usage", description: "The account's words this month, from the ledger, and its rate-limit windows." },
      { name: "Images", description: "Article images at their public URLs." },
      { name: "Health", description: "Readiness and liveness probes." },
    ],
    paths: allPaths(PATHS, VERSION_PATHS, ENDPOINT_PATHS),
    components: { ...COMPONENTS, schemas: { ...Object.fromEntries(Object.entries(SCHEMAS).map(([name, schema]) => [name, plain(schema)])), ArticleEvent: ARTICLE_EVENT } },
  };
}
