// A refusal's text reads the same in every client: the gateway's gRPC port percent-encodes
// grpc-message only where the gRPC spec asks (bytes outside printable ASCII, and "%"), so a stock
// @grpc/grpc-js client, which decodes with decodeURI, shows exactly the message /v1 answers, with
// its ";", ",", "/", "%" and non-ASCII letters, and without decoding anything itself.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { articleBody } from "../harness/articles.ts";
import { apiClient } from "../harness/http.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { createTenant } from "../harness/tenants.ts";

const protoRoot = fileURLToPath(new URL("../../proto", import.meta.url));

let stack: TestStack;
let articles: any;

beforeAll(async () => {
  stack = await useStack();
  const definition = protoLoader.loadSync("articles/api/v1/articles.proto", { includeDirs: [protoRoot], keepCase: true, longs: String, defaults: false, oneofs: true });
  articles = new (grpc.loadPackageDefinition(definition) as any).articles.api.v1.ArticleService(new URL(stack.publicGrpcUrl).host, grpc.credentials.createInsecure());
});

afterAll(() => articles?.close());

describe("grpc-message", () => {
  test("a refusal naming the caller's text with ; , / % and non-ASCII reads in grpc-js exactly as /v1's message", async () => {
    const tenant = await createTenant(stack);
    // The domain check quotes what it was given: the message carries the text back as sent.
    const given = "caf\u00e9;docs,v2/50%-off \u2014 \u65e5\u672c";
    const body = articleBody(tenant.projectId, { research_include_domains: [given] });
    const overHttp = await apiClient(stack.baseUrl, tenant.token).post("/v1/articles", body);
    expect(overHttp.status).toBe(422);
    const message: string = overHttp.body.message;
    expect(message).toContain(given);

    const metadata = new grpc.Metadata();
    metadata.set("authorization", `Bearer ${tenant.token}`);
    const refused = await new Promise<grpc.ServiceError>((resolve, reject) =>
      articles.CreateArticle({ article: { ...body, project_id: String(tenant.projectId) } }, metadata, { deadline: Date.now() + 10_000 }, (error: grpc.ServiceError | null) =>
        error ? resolve(error) : reject(new Error("CreateArticle was not refused")),
      ),
    );
    expect(refused.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(refused.details).toBe(message);
  });
});
