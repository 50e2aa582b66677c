// Strict workload tokens through a real gRPC call, as an operator's tool would make it: a stock
// @grpc/grpc-js client on accounts-billing's gRPC port calling OperatorService. The operator's
// token the launcher writes (the one the operator CLI sends) is let through to the method; the
// same caller's token without exp, without iat or valid for a century, all signed with the stack's
// own key, is UNAUTHENTICATED before the method runs.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import type { JWTPayload } from "jose";
import { LOCAL_ISSUER } from "../../deploy/local/workload-tokens.ts";
import { useStack, type TestStack } from "../harness/stack.ts";

const protoRoot = fileURLToPath(new URL("../../proto", import.meta.url));

let stack: TestStack;
let operator: any;

beforeAll(async () => {
  stack = await useStack();
  const definition = protoLoader.loadSync("articles/accounts_billing/v1/operator.proto", { includeDirs: [protoRoot], keepCase: true, longs: String, defaults: false });
  const Service = (grpc.loadPackageDefinition(definition) as any).articles.accounts_billing.v1.OperatorService;
  operator = new Service(new URL(stack.grpcUrls.accountsBilling).host, grpc.credentials.createInsecure());
});

afterAll(() => operator?.close());

/** The code UpdatePlan on a plan that does not exist answers with `token`: NOT_FOUND once the caller is let in. */
const codeWith = (token: string) =>
  new Promise<{ code: number; details: string }>((resolve) => {
    const metadata = new grpc.Metadata();
    metadata.set("authorization", `Bearer ${token}`);
    operator.UpdatePlan({ plan_id: "987654321", name: "never" }, metadata, { deadline: Date.now() + 10_000 }, (error: grpc.ServiceError | null) =>
      resolve(error ? { code: error.code, details: error.details } : { code: grpc.status.OK, details: "" }),
    );
  });

/** The operator's claims as the launcher signs them, with `changes` (undefined drops a claim). */
function operatorClaims(changes: Record<string, number | undefined>): JWTPayload {
  const now = Math.floor(Date.now() / 1000);
  const all = { iss: LOCAL_ISSUER, aud: "article-service", sub: "system:serviceaccount:article-service:operator", iat: now, nbf: now, exp: now + 3600, ...changes };
  return Object.fromEntries(Object.entries(all).filter(([, v]) => v !== undefined)) as JWTPayload;
}

describe("OperatorService over gRPC", () => {
  test("the launcher's operator token (the CLI's) reaches the method: iat and exp, an hour apart", async () => {
    await stack.identity.tokenFile("operator");
    const token = stack.identity.currentToken("operator")!;
    const { iat, exp } = JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString());
    expect(exp - iat).toBe(3600);
    expect((await codeWith(token)).code).toBe(grpc.status.NOT_FOUND);
  });

  test.each([
    ["without exp", { exp: undefined }, "carries no exp"],
    ["without iat", { iat: undefined }, "carries no iat"],
    ["valid for 100 years", { exp: Math.floor(Date.now() / 1000) + 100 * 365 * 86_400 }, "longer than IDENTITY_TOKEN_MAX_SECONDS"],
    ["valid for a day, past the default maximum of an hour", { exp: Math.floor(Date.now() / 1000) + 86_400 }, "longer than IDENTITY_TOKEN_MAX_SECONDS (3600 s)"],
  ])("the operator's token %s is UNAUTHENTICATED", async (_, changes, reason) => {
    const refused = await codeWith(await stack.identity.sign(operatorClaims(changes)));
    expect(refused.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(refused.details).toContain(reason);
  });
});
