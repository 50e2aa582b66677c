// The quality report over the whole stack: a blog post written and humanized by sim-real, the
// simulator's model that writes as real models do, is measured against its brief, and the report
// (every check passed, failed or not measured, with its value and target, and the repairs made before the humanize pass) is the
// same on GET, in the list, in the completion webhook's data and over the public gRPC API.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { apiClient, type ApiClient } from "../harness/http.ts";
import { closeClients, publicClients, type PublicClients } from "../harness/public-grpc.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { createTenant, type Tenant } from "../harness/tenants.ts";
import { startReceiver, type Receiver } from "../harness/webhook-receiver.ts";
import * as grpc from "@grpc/grpc-js";
import { addRealModel, articleBody, finished, REAL_MODEL, waitForArticle } from "./generation-support.ts";

const CHECKS = [
  "length",
  "keyword_in_title",
  "keyword_in_h1",
  "keyword_in_introduction",
  "keyword_in_h2",
  "keyword_in_meta_description",
  "keyword_density",
  "keywords_present",
  "single_h1",
  "heading_levels",
  "faq_section",
  "meta_title_length",
  "meta_description_length",
  "language",
  "readability",
  "no_placeholder_text",
  "no_filler",
  "complete_ending",
  "citations_resolved",
];

let stack: TestStack;
let api: ApiClient;
let tenant: Tenant;
let receiver: Receiver;
let grpcClients: PublicClients;

beforeAll(async () => {
  stack = await useStack();
  tenant = await createTenant(stack);
  api = apiClient(stack.baseUrl, tenant.token);
  receiver = startReceiver();
  grpcClients = publicClients(Number(new URL(stack.publicGrpcUrl).port));
  await addRealModel(stack);
});

afterAll(() => {
  receiver?.stop();
  closeClients(grpcClients);
});

// google.protobuf.Struct as @grpc/proto-loader hands it over (oneofs: true), as the JSON it carries.
const fromValue = (v: any): unknown =>
  v.kind === "structValue" ? fromStruct(v.structValue) : v.kind === "listValue" ? (v.listValue.values ?? []).map(fromValue) : v.kind === "nullValue" ? null : v[v.kind];
const fromStruct = (s: any) => Object.fromEntries(Object.entries(s?.fields ?? {}).map(([k, v]) => [k, fromValue(v)]));

function grpcArticle(id: string): Promise<any> {
  const metadata = new grpc.Metadata();
  metadata.set("authorization", `Bearer ${tenant.token}`);
  return new Promise((resolve, reject) =>
    grpcClients.ArticleService.GetArticle({ id }, metadata, { deadline: Date.now() + 10_000 }, (error: grpc.ServiceError | null, reply: any) => (error ? reject(error) : resolve(reply.article))),
  );
}

test("a sim-real article's report: every check with its value and target, the same on GET, list, webhook and gRPC", async () => {
  const hook = receiver.hook();
  const created = await api.post(
    "/v1/articles",
    articleBody(tenant.projectId, {
      title: "Choosing an Espresso Grinder for Home",
      target_word_count: 800,
      model: REAL_MODEL,
      target_keyword: "espresso grinder",
      keywords: ["burr", "grind size"],
      include_faq: true,
      humanize: true,
      webhook_url: hook.url,
    }),
  );
  expect(created.status).toBe(201);
  // Not measured until it completes.
  expect(created.body.data.quality).toBeNull();
  const id = created.body.data.external_id;
  await waitForArticle(api, id, finished, 180_000);
  const [delivery] = await hook.waitForRequests(1, 60_000);
  const article = (await api.get(`/v1/articles/${id}`)).body.data;

  const quality = article.quality;
  // Within the default budget of three repair calls, each naming the check it answered.
  expect(quality.repairs.length).toBeLessThanOrEqual(3);
  for (const repair of quality.repairs) {
    expect(CHECKS).toContain(repair.check);
    expect(typeof repair.action).toBe("string");
    expect(typeof repair.part).toBe("string");
  }
  expect(quality.checks.map((c: { name: string }) => c.name)).toEqual(CHECKS);
  for (const check of quality.checks) {
    expect(["passed", "failed", "not_measured"]).toContain(check.status);
    expect(typeof check.target).toBe("string");
    if (check.status === "not_measured") expect(check.value).toBeNull();
  }
  const byName = Object.fromEntries(quality.checks.map((c: { name: string }) => [c.name, c]));
  // Measured on the humanized text, the one delivered: its words are the article's.
  expect(byName.length.value).toBe(article.actual_word_count);
  const [low, high] = byName.length.target.match(/\d+/g).map(Number);
  expect(byName.length.status).toBe(article.actual_word_count >= low && article.actual_word_count <= high ? "passed" : "failed");
  expect(byName.keyword_in_title).toMatchObject({ status: "passed", value: true });
  expect(byName.meta_title_length).toMatchObject({ status: "passed", value: [...article.title].length });
  expect(byName.meta_description_length.value).toBe(article.description === null ? null : [...article.description].length);
  expect(byName.language).toMatchObject({ status: "passed", value: "en", target: "en" });
  expect(byName.readability.target).toBe("Flesch reading ease ≥ 50");
  expect(typeof byName.readability.value).toBe("number");
  expect(byName.citations_resolved).toEqual({ name: "citations_resolved", status: "not_measured", value: null, target: "no citations asked" });
  // The simulator's steps write no FAQ section: a repair may have written one, else a failure shown with what was found.
  expect(byName.faq_section).toMatchObject({ name: "faq_section", target: "present" });
  expect(byName.faq_section.status).toBe(byName.faq_section.value ? "passed" : "failed");
  for (const missing of byName.keywords_present.value) expect(["burr", "grind size"]).toContain(missing);
  expect(byName.keywords_present.status).toBe(byName.keywords_present.value.length === 0 ? "passed" : "failed");

  // One report wherever the article is read.
  const listed = (await api.get(`/v1/articles?project_id=${tenant.projectId}`)).body.data.find((a: { external_id: string }) => a.external_id === id);
  expect(listed.quality).toEqual(quality);
  expect(delivery!.json.data.quality).toEqual(quality);
  expect(fromStruct((await grpcArticle(id)).quality)).toEqual(quality);
}, 240_000);
