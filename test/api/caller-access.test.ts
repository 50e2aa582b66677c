// Every (caller, method) pair of the stack's internal contracts, through the running services:
// the expected table below is this test's own statement of least privilege, written by hand (it
// never reads the services' access tables). Each call is made with the caller's real identity
// token, and its answer is checked exactly: a refused call is PERMISSION_DENIED; an allowed one
// answers what its request makes it answer, written here per method. A request carries a NUL in a
// text field where the method has one, so that it stops at the services' input check
// (INVALID_ARGUMENT) after authorization; a method without one gets an empty request, which names
// nothing that exists (NOT_FOUND) or only reads (OK). Nothing changes: the operator's methods,
// two of which take no input and so create a demo tenant when allowed, are called on an
// accounts-billing of their own over a throwaway database.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { DescMessage, DescService } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { AccountsService } from "../../proto/gen/articles/accounts_billing/v1/accounts_pb.ts";
import { OperatorService } from "../../proto/gen/articles/accounts_billing/v1/operator_pb.ts";
import { QuotaService } from "../../proto/gen/articles/accounts_billing/v1/quota_pb.ts";
import { SessionService, TenantAdminService } from "../../proto/gen/articles/accounts_billing/v1/self_service_pb.ts";
import { ArticleLifecycleService, ArticleStoreService } from "../../proto/gen/articles/article_store/v1/articles_pb.ts";
import { CostBreakdownService } from "../../proto/gen/articles/generation_runner/v1/cost_breakdown_pb.ts";
import { ArticleImageService } from "../../proto/gen/articles/generation_runner/v1/images_pb.ts";
import { ModelCatalogService } from "../../proto/gen/articles/generation_runner/v1/models_pb.ts";
import { GenerationRunService } from "../../proto/gen/articles/generation_runner/v1/runs_pb.ts";
import { WebhookSigningService } from "../../proto/gen/articles/webhook_dispatcher/v1/signing_pb.ts";
import { PublishingService } from "../../proto/gen/articles/webhook_dispatcher/v1/publishing_pb.ts";
import { WebhookEndpointService } from "../../proto/gen/articles/webhook_dispatcher/v1/endpoints_pb.ts";
import { WorkflowSnapshotService } from "../../proto/gen/articles/workflow_catalog/v1/snapshots_pb.ts";
import { WorkflowCatalogService } from "../../proto/gen/articles/workflow_catalog/v1/workflows_pb.ts";
import { serviceClient } from "../../services/kit/src/clients.ts";
import { fixedCredential } from "../../services/kit/src/workload-identity.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { startScratchService, type ScratchService } from "../harness/scratch-service.ts";

const GATEWAY = "gateway";
const ACCOUNTS = "accounts-billing";
const CATALOG = "workflow-catalog";
const STORE = "article-store";
const RUNNER = "generation-runner";
const DISPATCHER = "webhook-dispatcher";
const OPERATOR = "operator";
/** An internal team's workload: granted nothing on the internal contracts. */
const TEAM = "reporting/exporter";
const CALLERS = [GATEWAY, ACCOUNTS, CATALOG, STORE, RUNNER, DISPATCHER, OPERATOR, TEAM];

// Who may call each method. Nothing that handles untrusted input (the runner, the dispatcher)
// reaches operator or key methods; the gateway creates no keys; internal teams reach none of this.
const EXPECTED: Record<string, Record<string, string[]>> = {
  [AccountsService.typeName]: {
    AuthenticateKey: [GATEWAY],
    ResolveMember: [GATEWAY],
    GetUser: [GATEWAY, OPERATOR],
    AuthorizeProject: [GATEWAY],
    ListViewableProjects: [GATEWAY],
    GetProject: [GATEWAY, STORE, DISPATCHER, OPERATOR],
  },
  [QuotaService.typeName]: {
    ReserveWords: [GATEWAY],
    SettleWords: [RUNNER],
    ReleaseWords: [GATEWAY, RUNNER, STORE],
    GetWordUsage: [GATEWAY, OPERATOR],
    GetGenerationShare: [RUNNER],
    ListHeldReservations: [STORE],
    GetUsageReport: [GATEWAY, OPERATOR],
  },
  // The dashboard's sign-in, self-service, "forgot password" and sign-up go through the gateway; the operator makes a new user's first link.
  [SessionService.typeName]: {
    SignIn: [GATEWAY],
    AuthenticateSession: [GATEWAY],
    EndSession: [GATEWAY],
    ChangePassword: [GATEWAY],
    RedeemLink: [GATEWAY],
    CreatePasswordLink: [OPERATOR],
    RequestPasswordReset: [GATEWAY],
    SignUp: [GATEWAY],
  },
  [TenantAdminService.typeName]: Object.fromEntries(TenantAdminService.methods.map((m) => [m.name, [GATEWAY]])),
  [OperatorService.typeName]: Object.fromEntries(OperatorService.methods.map((m) => [m.name, [OPERATOR]])),
  [ArticleStoreService.typeName]: {
    CreateArticle: [GATEWAY],
    GetArticle: [GATEWAY, RUNNER, DISPATCHER, OPERATOR],
    BatchGetArticlesByExternalId: [RUNNER, DISPATCHER],
    ListArticles: [GATEWAY],
    BatchGetArticles: [GATEWAY],
    FindIdempotentArticle: [GATEWAY],
    ClaimIdempotencyKey: [GATEWAY],
    CreateBrandVoice: [OPERATOR],
    GetBrandVoice: [GATEWAY, RUNNER, OPERATOR],
    CreateImagePreset: [OPERATOR],
    GetImagePreset: [GATEWAY, RUNNER, OPERATOR],
    ListArticleEvents: [GATEWAY],
  },
  [ArticleLifecycleService.typeName]: {
    RecordProgress: [RUNNER],
    CompleteGeneration: [RUNNER],
    AddVersion: [RUNNER],
    RecordOriginality: [RUNNER],
    FailArticle: [RUNNER],
    CancelArticle: [GATEWAY, OPERATOR],
    RecordResearchSources: [RUNNER],
    ListResearchSources: [OPERATOR],
    RecordDeliveryAttempt: [DISPATCHER],
    ListDeliveryAttempts: [OPERATOR],
    MarkPublished: [DISPATCHER],
    MarkDeliveryFailed: [DISPATCHER],
    RecordDeliveries: [DISPATCHER],
    RecordPublication: [DISPATCHER],
  },
  [ModelCatalogService.typeName]: { ResolveModel: [GATEWAY], ListModels: [GATEWAY, OPERATOR], AddModel: [OPERATOR], UpdateModel: [OPERATOR] },
  [GenerationRunService.typeName]: { GetRun: [OPERATOR] },
  [ArticleImageService.typeName]: { GetImage: [GATEWAY, DISPATCHER] },
  [CostBreakdownService.typeName]: { GetCostBreakdown: [GATEWAY] },
  [WebhookSigningService.typeName]: { SetSigningSecret: [OPERATOR], RemoveSigningSecret: [OPERATOR], GetSigningStatus: [OPERATOR] },
  // A project's webhook endpoints: the gateway (for /v1, the dashboard and articles.api.v1) and the operator.
  [WebhookEndpointService.typeName]: Object.fromEntries(WebhookEndpointService.methods.map((m) => [m.name, [GATEWAY, OPERATOR]])),
  [PublishingService.typeName]: {
    CreateDestination: [GATEWAY, OPERATOR],
    ListDestinations: [GATEWAY, OPERATOR],
    GetDestination: [GATEWAY, OPERATOR],
    CheckDestination: [GATEWAY, OPERATOR],
    DeleteDestination: [GATEWAY, OPERATOR],
    PublishArticle: [GATEWAY, OPERATOR],
  },
  [WorkflowSnapshotService.typeName]: { ResolveArticleType: [GATEWAY], GetSnapshot: [RUNNER] },
  [WorkflowCatalogService.typeName]: Object.fromEntries(WorkflowCatalogService.methods.map((m) => [m.name, [GATEWAY]])),
};

// What an allowed call answers, for the methods whose request cannot carry a NUL: every other
// allowed call answers INVALID_ARGUMENT.
const ALLOWED_ANSWERS: Record<string, string> = {
  [`${AccountsService.typeName}/GetProject`]: "NotFound",
  [`${AccountsService.typeName}/GetUser`]: "NotFound",
  [`${AccountsService.typeName}/ResolveMember`]: "NotFound",
  [`${AccountsService.typeName}/ListViewableProjects`]: "ok",
  [`${QuotaService.typeName}/GetGenerationShare`]: "NotFound",
  [`${QuotaService.typeName}/GetWordUsage`]: "ok",
  [`${QuotaService.typeName}/GetUsageReport`]: "ok",
  [`${SessionService.typeName}/CreatePasswordLink`]: "NotFound",
  [`${TenantAdminService.typeName}/ListUserAccounts`]: "ok",
  [`${ArticleStoreService.typeName}/BatchGetArticles`]: "ok",
  [`${ArticleStoreService.typeName}/BatchGetArticlesByExternalId`]: "ok",
  [`${ArticleStoreService.typeName}/GetBrandVoice`]: "NotFound",
  [`${ArticleStoreService.typeName}/GetImagePreset`]: "NotFound",
  // No deliveries to record: nothing recorded.
  [`${ArticleLifecycleService.typeName}/RecordDeliveries`]: "ok",
  [`${ModelCatalogService.typeName}/ListModels`]: "ok",
  [`${OperatorService.typeName}/DisableUser`]: "NotFound",
  [`${OperatorService.typeName}/RemoveMember`]: "NotFound",
  [`${OperatorService.typeName}/RevokeApiKey`]: "NotFound",
  [`${OperatorService.typeName}/ListApiKeys`]: "NotFound",
  [`${OperatorService.typeName}/Subscribe`]: "NotFound",
  [`${OperatorService.typeName}/Unsubscribe`]: "NotFound",
  // No input at all: they create a demo tenant, in the throwaway database.
  [`${OperatorService.typeName}/CreateDemoTenant`]: "ok",
  [`${OperatorService.typeName}/EnsureDemoTenant`]: "ok",
  [`${WorkflowCatalogService.typeName}/GetStep`]: "NotFound",
  [`${WorkflowCatalogService.typeName}/DeleteStep`]: "NotFound",
};

const SERVED: [DescService, string][] = [
  [AccountsService, "ACCOUNTS_BILLING_URL"],
  [QuotaService, "ACCOUNTS_BILLING_URL"],
  [SessionService, "ACCOUNTS_BILLING_URL"],
  [TenantAdminService, "ACCOUNTS_BILLING_URL"],
  // On an accounts-billing of its own (see above).
  [OperatorService, "SCRATCH_ACCOUNTS_BILLING_URL"],
  [ArticleStoreService, "ARTICLE_STORE_URL"],
  [ArticleLifecycleService, "ARTICLE_STORE_URL"],
  [ModelCatalogService, "GENERATION_RUNNER_URL"],
  [GenerationRunService, "GENERATION_RUNNER_URL"],
  [ArticleImageService, "GENERATION_RUNNER_URL"],
  [CostBreakdownService, "GENERATION_RUNNER_URL"],
  [WebhookSigningService, "WEBHOOK_DISPATCHER_URL"],
  [PublishingService, "WEBHOOK_DISPATCHER_URL"],
  [WebhookEndpointService, "WEBHOOK_DISPATCHER_URL"],
  [WorkflowSnapshotService, "WORKFLOW_CATALOG_URL"],
  [WorkflowCatalogService, "WORKFLOW_CATALOG_URL"],
];

/** A request that stops at the input check: a NUL in its first text field, at the top or one message down. */
function harmlessRequest(input: DescMessage): Record<string, unknown> {
  for (const field of input.fields) if (field.fieldKind === "scalar" && field.scalar === 9 /* string */) return { [field.localName]: "\u0000" };
  for (const field of input.fields) {
    if (field.fieldKind !== "message") continue;
    for (const inner of field.message.fields) if (inner.fieldKind === "scalar" && inner.scalar === 9) return { [field.localName]: { [inner.localName]: "\u0000" } };
  }
  return {};
}

let stack: TestStack;
let scratch: ScratchService;
const tokens = new Map<string, string>();

beforeAll(async () => {
  stack = await useStack();
  scratch = await startScratchService(stack, "accountsBilling", ACCOUNTS);
  for (const caller of CALLERS) tokens.set(caller, await stack.identity.mint(caller));
}, 60_000);

afterAll(async () => {
  await scratch?.stop();
});

const urlOf = (variable: string) => (variable === "SCRATCH_ACCOUNTS_BILLING_URL" ? scratch.url : stack.env[variable]);

describe("every caller reaches exactly the methods its table allows", () => {
  test("the expected table covers every served method", () => {
    for (const [service] of SERVED) {
      expect(Object.keys(EXPECTED[service.typeName] ?? {}).sort()).toEqual(service.methods.map((m) => m.name).sort());
    }
  });

  for (const [service, urlVariable] of SERVED) {
    test(`${service.name}: each (caller, method) answers exactly as allowed, or PERMISSION_DENIED`, async () => {
      const outcomes: string[] = [];
      const expected: string[] = [];
      for (const caller of CALLERS) {
        const client = serviceClient(service, { baseUrl: urlOf(urlVariable), credential: fixedCredential(tokens.get(caller)!), timeoutMs: 10_000 }) as Record<string, (req: unknown) => Promise<unknown>>;
        for (const method of service.methods) {
          const code = await client[method.localName](harmlessRequest(method.input)).then(
            () => "ok",
            (error: ConnectError) => Code[error.code],
          );
          const allowed = EXPECTED[service.typeName][method.name]?.includes(caller) ?? false;
          outcomes.push(`${caller} ${method.name}: ${code}`);
          expected.push(`${caller} ${method.name}: ${allowed ? (ALLOWED_ANSWERS[`${service.typeName}/${method.name}`] ?? "InvalidArgument") : "PermissionDenied"}`);
        }
      }
      expect(outcomes).toEqual(expected);
    }, 60_000);
  }
});

describe("what the issue found is closed", () => {
  test("the generation runner's own token cannot create an API key nor mark an article published", async () => {
    // The very token the running runner holds, read from its file.
    const runnerToken = (await Bun.file(await stack.identity.tokenFile(RUNNER)).text()).trim();
    const asRunner = (service: DescService, url: string) => serviceClient(service, { baseUrl: url, credential: fixedCredential(runnerToken) }) as any;
    const key = await asRunner(OperatorService, stack.env.ACCOUNTS_BILLING_URL).createApiKey({ accountId: 1n, userId: 1n, name: "stolen" }).catch((e: ConnectError) => e);
    expect(key).toBeInstanceOf(ConnectError);
    expect(key.code).toBe(Code.PermissionDenied);
    expect(key.rawMessage).toBe(`caller "generation-runner" may not call ${OperatorService.typeName}/CreateApiKey`);
    const published = await asRunner(ArticleLifecycleService, stack.env.ARTICLE_STORE_URL).markPublished({ externalId: crypto.randomUUID(), versionId: 1n }).catch((e: ConnectError) => e);
    expect(published.code).toBe(Code.PermissionDenied);
  });

  test("refusals are counted by caller and method on the refusing service's metrics", async () => {
    const counted = async () => {
      const text = await (await fetch(`${stack.metricsUrls.accountsBilling}/metrics`)).text();
      const line = /rpc_server_refused_total\{[^}]*caller="generation-runner"[^}]*rpc_method="articles\.accounts_billing\.v1\.OperatorService\/CreateApiKey"[^}]*\} (\d+)/.exec(text);
      return line ? Number(line[1]) : 0;
    };
    const before = await counted();
    const asRunner = serviceClient(OperatorService, { baseUrl: stack.env.ACCOUNTS_BILLING_URL, credential: fixedCredential(tokens.get(RUNNER)!) }) as any;
    expect((await asRunner.createApiKey({ accountId: 1n, userId: 1n, name: "stolen" }).catch((e: ConnectError) => e)).code).toBe(Code.PermissionDenied);
    expect(await counted()).toBe(before + 1);
  });
});
