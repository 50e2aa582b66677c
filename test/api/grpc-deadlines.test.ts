// A caller's deadline longer than a listener's cap is shortened to the cap, not refused: stock
// gRPC clients commonly ask a day, and the call is served as any other (docs/grpc.md, Limits).
// The public port caps at an hour, a service's gRPC port at ten minutes (message-limits.ts).
import { beforeAll, describe, expect, test } from "bun:test";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { useStack, type TestStack } from "../harness/stack.ts";

const protoRoot = fileURLToPath(new URL("../../proto", import.meta.url));
const DAY_MS = 86_400_000;

let stack: TestStack;

function healthClient(address: string) {
  const definition = protoLoader.loadSync("grpc/health/v1/health.proto", { includeDirs: [protoRoot], keepCase: true, enums: String, defaults: true });
  return new (grpc.loadPackageDefinition(definition) as any).grpc.health.v1.Health(address, grpc.credentials.createInsecure());
}

/** Check with a deadline a day away: the reply's status, or the refusal's code and text. */
function checkWithDayDeadline(address: string): Promise<{ status?: string; code?: number; details?: string }> {
  const client = healthClient(address);
  return new Promise((resolve) =>
    client.Check({ service: "" }, new grpc.Metadata(), { deadline: Date.now() + DAY_MS }, (error: grpc.ServiceError | null, reply: any) => {
      client.close();
      resolve(error ? { code: error.code, details: error.details } : { status: reply.status });
    }),
  );
}

beforeAll(async () => {
  stack = await useStack();
});

describe("deadlines past a listener's cap", () => {
  test("the gateway's public gRPC port serves a call whose deadline is a day away", async () => {
    expect(await checkWithDayDeadline(new URL(stack.publicGrpcUrl).host)).toEqual({ status: "SERVING" });
  });

  test("a service's gRPC port serves a call whose deadline is a day away", async () => {
    expect(await checkWithDayDeadline(new URL(stack.grpcUrls.workflowCatalog).host)).toEqual({ status: "SERVING" });
  });

  test("a service's Connect port serves a call whose connect-timeout-ms is a day", async () => {
    const res = await fetch(`${stack.env.WORKFLOW_CATALOG_URL}/grpc.health.v1.Health/Check`, {
      method: "POST",
      headers: { "content-type": "application/json", "connect-protocol-version": "1", "connect-timeout-ms": String(DAY_MS) },
      body: "{}",
    });
    expect({ status: res.status, body: await res.json() }).toEqual({ status: 200, body: { status: "SERVING" } });
  });
});
