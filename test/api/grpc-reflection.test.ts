// Internal teams explore the contracts with grpcurl or grpcui, which learn them from server
// reflection. A stock @grpc/grpc-js client speaks the reflection protocol to every service, builds
// its client from the descriptors it got back (no .proto files of the services), and calls them.
import { stackCredential } from "../harness/service-clients.ts";
import { beforeAll, describe, expect, test } from "bun:test";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { useStack, type TestStack } from "../harness/stack.ts";
import { createTenant } from "../harness/tenants.ts";

const protoRoot = fileURLToPath(new URL("../../proto", import.meta.url));
const loaderOptions = { keepCase: true, longs: String, enums: String, defaults: true };

/** The services each process must offer (besides health and reflection), as rpc.ts registers them. */
const EXPECTED: Record<string, string[]> = {
  accountsBilling: ["articles.accounts_billing.v1.AccountsService", "articles.accounts_billing.v1.QuotaService", "articles.accounts_billing.v1.OperatorService"],
  workflowCatalog: ["articles.workflow_catalog.v1.WorkflowCatalogService", "articles.workflow_catalog.v1.WorkflowSnapshotService"],
  articleStore: ["articles.article_store.v1.ArticleStoreService", "articles.article_store.v1.ArticleLifecycleService"],
  generationRunner: [
    "articles.generation_runner.v1.ModelCatalogService",
    "articles.generation_runner.v1.GenerationRunService",
    "articles.generation_runner.v1.CostBreakdownService",
    "articles.generation_runner.v1.ArticleImageService",
  ],
  webhookDispatcher: ["articles.webhook_dispatcher.v1.WebhookSigningService"],
};
const ALWAYS = ["grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection"];

let stack: TestStack;

function reflectionClient(address: string, version: "v1" | "v1alpha") {
  const definition = protoLoader.loadSync(`grpc/reflection/${version}/reflection.proto`, { ...loaderOptions, includeDirs: [protoRoot] });
  const Service = (grpc.loadPackageDefinition(definition) as any).grpc.reflection[version].ServerReflection;
  return new Service(address, grpc.credentials.createInsecure());
}

function credential(): grpc.Metadata {
  const metadata = new grpc.Metadata();
  metadata.set("authorization", stackCredential(stack, "operator").authorization());
  return metadata;
}

/** Sends the requests on one reflection stream and collects the answers, in order. */
function reflect(address: string, requests: object[], opts: { version?: "v1" | "v1alpha"; metadata?: grpc.Metadata } = {}): Promise<any[]> {
  const client = reflectionClient(address, opts.version ?? "v1");
  return new Promise((resolve, reject) => {
    const answers: any[] = [];
    const call = client.ServerReflectionInfo(opts.metadata ?? credential(), { deadline: Date.now() + 10_000 });
    call.on("data", (answer: any) => answers.push(answer));
    call.on("error", (error: Error) => (client.close(), reject(error)));
    call.on("end", () => (client.close(), resolve(answers)));
    for (const request of requests) call.write(request);
    call.end();
  });
}

const addressOf = (name: string) => new URL(stack.grpcUrls[name as keyof TestStack["grpcUrls"]]).host;

async function listServices(address: string, version: "v1" | "v1alpha" = "v1"): Promise<string[]> {
  const [answer] = await reflect(address, [{ list_services: "" }], { version });
  return answer.list_services_response.service.map((s: { name: string }) => s.name);
}

function varint(n: number): number[] {
  const out: number[] = [];
  for (; n > 0x7f; n >>>= 7) out.push((n & 0x7f) | 0x80);
  return [...out, n];
}

/** Serialized FileDescriptorProtos → a FileDescriptorSet (each one is field 1, length-delimited). */
function descriptorSet(files: Buffer[]): Buffer {
  return Buffer.concat(files.flatMap((file) => [Buffer.from([0x0a, ...varint(file.length)]), file]));
}

/** A grpc-js client built only from what reflection answers for the symbol. */
async function clientFromReflection(address: string, service: string) {
  const [answer] = await reflect(address, [{ file_containing_symbol: service }]);
  expect(answer.error_response).toBeFalsy();
  const definition = protoLoader.loadFileDescriptorSetFromBuffer(descriptorSet(answer.file_descriptor_response.file_descriptor_proto), loaderOptions);
  let node: any = grpc.loadPackageDefinition(definition);
  for (const part of service.split(".")) node = node[part];
  return { Client: node, definition: definition[service] as grpc.ServiceDefinition };
}

const unary = (client: any, method: string, request: object, metadata = credential()) =>
  new Promise<any>((resolve, reject) =>
    client[method](request, metadata, { deadline: Date.now() + 5000 }, (error: Error | null, reply: any) => (error ? reject(error) : resolve(reply))),
  );

beforeAll(async () => {
  stack = await useStack();
});

describe("gRPC server reflection", () => {
  test("every service lists what it serves, over v1 and v1alpha", async () => {
    for (const [name, services] of Object.entries(EXPECTED)) {
      for (const version of ["v1", "v1alpha"] as const) {
        const listed = await listServices(addressOf(name), version);
        for (const service of [...services, ...ALWAYS]) expect({ name, version, has: listed.includes(service) }).toEqual({ name, version, has: true });
      }
    }
  });

  test("every listed service and method resolves to a complete file a stock client can load", async () => {
    for (const name of Object.keys(EXPECTED)) {
      const address = addressOf(name);
      for (const service of await listServices(address)) {
        const { definition } = await clientFromReflection(address, service);
        const methods = Object.values(definition);
        expect(methods.length).toBeGreaterThan(0);
        // Each method's full name resolves too (grpcurl describes methods this way).
        const answers = await reflect(address, methods.map((m) => ({ file_containing_symbol: `${service}.${m.path.split("/").pop()}` })));
        for (const answer of answers) expect(answer.error_response ?? null).toBeNull();
      }
    }
  });

  test("a file is found by name, and an unknown name is an error answer that keeps the stream open", async () => {
    const answers = await reflect(addressOf("articleStore"), [
      { file_by_filename: "articles/article_store/v1/articles.proto" },
      { file_containing_symbol: "articles.article_store.v1.NoSuchThing" },
      { list_services: "" },
    ]);
    expect(answers).toHaveLength(3);
    expect(answers[0].file_descriptor_response.file_descriptor_proto.length).toBeGreaterThan(1);
    expect(answers[1].error_response.error_code).toBe(grpc.status.NOT_FOUND);
    expect(answers[2].list_services_response.service.length).toBeGreaterThan(0);
  });

  test("methods found by reflection answer calls carrying an identity token", async () => {
    const tenant = await createTenant(stack);
    const accountsAddress = addressOf("accountsBilling");
    const accounts = await clientFromReflection(accountsAddress, "articles.accounts_billing.v1.AccountsService");
    expect(Object.keys(accounts.definition)).toContain("GetUser");
    const user = await unary(new accounts.Client(accountsAddress, grpc.credentials.createInsecure()), "GetUser", { user_id: String(tenant.userId) });
    expect(user.user.email).toBe(tenant.email);

    const runnerAddress = addressOf("generationRunner");
    const models = await clientFromReflection(runnerAddress, "articles.generation_runner.v1.ModelCatalogService");
    const listed = await unary(new models.Client(runnerAddress, grpc.credentials.createInsecure()), "ListModels", {});
    expect(listed.models.length).toBeGreaterThan(0);
    expect(listed.models[0].id).toContain(":");
  });

  test("reflection needs an identity token, like every call but health", async () => {
    const error = await reflect(addressOf("workflowCatalog"), [{ list_services: "" }], { metadata: new grpc.Metadata() }).catch((e) => e);
    expect(error.code).toBe(grpc.status.UNAUTHENTICATED);
  });
});
