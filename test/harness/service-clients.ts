// The test stack's internal gRPC contracts, called as the stack's own processes call them (each
// with the identity token of the caller the service's access table allows): what tests inspect
// that the public API does not show.
import type { DescService } from "@bufbuild/protobuf";
import { QuotaService } from "../../proto/gen/articles/accounts_billing/v1/quota_pb.ts";
import { ArticleLifecycleService, ArticleStoreService } from "../../proto/gen/articles/article_store/v1/articles_pb.ts";
import { ModelCatalogService } from "../../proto/gen/articles/generation_runner/v1/models_pb.ts";
import { GenerationRunService } from "../../proto/gen/articles/generation_runner/v1/runs_pb.ts";
import { WebhookSigningService } from "../../proto/gen/articles/webhook_dispatcher/v1/signing_pb.ts";
import { WorkflowSnapshotService } from "../../proto/gen/articles/workflow_catalog/v1/snapshots_pb.ts";
import { CALLERS, type StackCaller } from "../../services/kit/src/access-policy.ts";
import { serviceClient } from "../../services/kit/src/clients.ts";
import type { Credential } from "../../services/kit/src/workload-identity.ts";
import type { Stack } from "../../deploy/local/stack.ts";
import type { TestStack } from "./stack.ts";

const { gateway, generationRunner, webhookDispatcher, operator } = CALLERS;

/** A client of a stack's service, calling as `caller`. */
export function stackClient<S extends DescService>(stack: Pick<Stack, "identity">, service: S, baseUrl: string, caller: string) {
  // The launcher has every stack caller's token ready before the stack starts.
  return serviceClient(service, { baseUrl, credential: stackCredential(stack, caller) });
}

const credentials = new WeakMap<object, Map<string, Credential>>();

/** The credential of one of the stack's own callers (the launcher wrote its token before any process started). */
export function stackCredential(stack: Pick<Stack, "identity">, caller: string): Credential {
  let ofStack = credentials.get(stack.identity);
  if (!ofStack) credentials.set(stack.identity, (ofStack = new Map()));
  let credential = ofStack.get(caller);
  if (!credential) {
    const token = stack.identity.currentToken(caller);
    if (token === undefined) throw new Error(`${caller} is not one of the stack's callers; mint a token for it with stack.identity.mint`);
    credential = { authorization: () => `Bearer ${stack.identity.currentToken(caller)}` };
    ofStack.set(caller, credential);
  }
  return credential;
}

const as = (caller: StackCaller) => caller;
export const quotaClient = (stack: TestStack, caller = as(gateway)) => stackClient(stack, QuotaService, stack.env.ACCOUNTS_BILLING_URL, caller);
export const storeClient = (stack: TestStack, caller = as(gateway)) => stackClient(stack, ArticleStoreService, stack.env.ARTICLE_STORE_URL, caller);
/** As the generation runner records what generation did; pass the dispatcher or the operator for their methods. */
export const lifecycleClient = (stack: TestStack, caller = as(generationRunner)) => stackClient(stack, ArticleLifecycleService, stack.env.ARTICLE_STORE_URL, caller);
export const deliveryClient = (stack: TestStack) => lifecycleClient(stack, webhookDispatcher);
export const runClient = (stack: TestStack) => stackClient(stack, GenerationRunService, stack.env.GENERATION_RUNNER_URL, operator);
/** As the operator changes the catalog; pass the gateway to resolve models as article creation does. */
export const modelCatalogClient = (stack: TestStack, caller = as(operator)) => stackClient(stack, ModelCatalogService, stack.env.GENERATION_RUNNER_URL, caller);
export const signingClient = (stack: TestStack) => stackClient(stack, WebhookSigningService, stack.env.WEBHOOK_DISPATCHER_URL, operator);
/** The catalog's snapshot contract, as article creation (the gateway) and the runner call it. */
export const snapshotClient = (stack: TestStack, caller = as(gateway)) => stackClient(stack, WorkflowSnapshotService, stack.env.WORKFLOW_CATALOG_URL, caller);
