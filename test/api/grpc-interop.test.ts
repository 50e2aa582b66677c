// Internal teams call the contracts directly: a stock @grpc/grpc-js client that loads the .proto
// files (no generated code) calls a running service, and needs the service credential to do so.
import { stackCredential } from "../harness/service-clients.ts";
import { beforeAll, describe, expect, test } from "bun:test";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { useStack, type TestStack } from "../harness/stack.ts";
import { createTenant } from "../harness/tenants.ts";

const protoRoot = fileURLToPath(new URL("../../proto", import.meta.url));

let stack: TestStack;
let accounts: any;
let health: any;

function loadService(file: string, path: string[], address: string) {
  const definition = protoLoader.loadSync(file, { includeDirs: [protoRoot], keepCase: true, longs: String, enums: String, defaults: true });
  let node: any = grpc.loadPackageDefinition(definition);
  for (const part of path) node = node[part];
  return new node(address, grpc.credentials.createInsecure());
}

const unary = (client: any, method: string, request: object, metadata = new grpc.Metadata()) =>
  new Promise<any>((resolve, reject) => client[method](request, metadata, { deadline: Date.now() + 5000 }, (error: Error | null, reply: any) => (error ? reject(error) : resolve(reply))));

beforeAll(async () => {
  stack = await useStack();
  const address = new URL(stack.grpcUrls.accountsBilling).host;
  accounts = loadService("articles/accounts_billing/v1/accounts.proto", ["articles", "accounts_billing", "v1", "AccountsService"], address);
  health = loadService("grpc/health/v1/health.proto", ["grpc", "health", "v1", "Health"], address);
});

describe("a stock grpc-js client", () => {
  test("checks health without a credential", async () => {
    const reply = await unary(health, "Check", { service: "" });
    expect(reply.status).toBe("SERVING");
  });

  test("health as the protocol has it: Check of an unknown service is NOT_FOUND, Watch of one streams SERVICE_UNKNOWN; the gateway's public port alike", async () => {
    for (const address of [new URL(stack.grpcUrls.accountsBilling).host, new URL(stack.publicGrpcUrl).host]) {
      const probe = loadService("grpc/health/v1/health.proto", ["grpc", "health", "v1", "Health"], address);
      const checked = await unary(probe, "Check", { service: "no.such.Service" }).catch((e) => e);
      expect(checked.code).toBe(grpc.status.NOT_FOUND);
      const first = await new Promise<any>((resolve, reject) => {
        const stream = probe.Watch({ service: "no.such.Service" });
        stream.on("data", (reply: any) => {
          resolve(reply);
          stream.cancel();
        });
        stream.on("error", (error: grpc.ServiceError) => (error.code === grpc.status.CANCELLED ? undefined : reject(error)));
      });
      expect(first.status).toBe("SERVICE_UNKNOWN");
      expect((await unary(probe, "Check", { service: "" })).status).toBe("SERVING");
    }
  });

  test("calls AccountsService.GetUser with the operator's identity token", async () => {
    const tenant = await createTenant(stack);
    const metadata = new grpc.Metadata();
    metadata.set("authorization", stackCredential(stack, "operator").authorization());
    const reply = await unary(accounts, "GetUser", { user_id: String(tenant.userId) }, metadata);
    expect(reply.user.id).toBe(String(tenant.userId));
    expect(reply.user.email).toBe(tenant.email);
  });

  test("is refused without an identity token", async () => {
    const error = await unary(accounts, "GetUser", { user_id: "1" }).catch((e) => e);
    expect(error.code).toBe(grpc.status.UNAUTHENTICATED);
  });

  test("gets NOT_FOUND for a missing record", async () => {
    const metadata = new grpc.Metadata();
    metadata.set("authorization", stackCredential(stack, "operator").authorization());
    const error = await unary(accounts, "GetUser", { user_id: "999999999" }, metadata).catch((e) => e);
    expect(error.code).toBe(grpc.status.NOT_FOUND);
  });
});
