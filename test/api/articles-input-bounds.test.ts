// POST /v1/articles at the edges of JSON: ids too large for any record answer 422 (never a 500),
// lengths count characters as a person does, and a keyword error names the position sent.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { useStack, type TestStack } from "../harness/stack.ts";
import { apiClient, type ApiClient } from "../harness/http.ts";
import { createTenant, type Tenant } from "../harness/tenants.ts";
import { articleBody } from "../harness/articles.ts";
import { holdGeneration, wordUsage, type GenerationHold } from "./articles-fixtures.ts";

let stack: TestStack;
let hold: GenerationHold;
let tenant: Tenant;
let api: ApiClient;

beforeAll(async () => {
  stack = await useStack();
  hold = await holdGeneration(stack);
  tenant = await createTenant(stack);
  api = apiClient(stack.baseUrl, tenant.token);
});

afterAll(async () => {
  await hold.release();
});

describe("ids beyond any record", () => {
  for (const field of ["project_id", "brand_voice_id", "image_preset_id"]) {
    for (const value of [1e20, 9223372036854775807, 1e300]) {
      test(`${field} = ${value} is a 422 on ${field}`, async () => {
        const res = await api.post("/v1/articles", articleBody(tenant.projectId, { [field]: value }));
        expect(res.status).toBe(422);
        expect(Object.keys(res.body.errors)).toEqual([field]);
        expect(res.body.errors[field][0]).toContain("between 1 and");
      });
    }
  }

  test("the largest exact integer is looked up like any id", async () => {
    const res = await api.post("/v1/articles", articleBody(tenant.projectId, { brand_voice_id: Number.MAX_SAFE_INTEGER }));
    expect(res.status).toBe(422);
    expect(res.body.errors.brand_voice_id).toEqual(["The selected brand voice is invalid."]);
  });
});

describe("lengths count characters", () => {
  test("a title of 255 emoji is accepted and returned as sent; 256 is refused", async () => {
    const title = "☕".repeat(100) + "😀".repeat(155);
    const ok = await api.post("/v1/articles", articleBody(tenant.projectId, { title }));
    expect(ok.status).toBe(201);
    expect(ok.body.data.title).toBe(title);

    const before = await wordUsage(stack, tenant.accountId);
    const tooLong = await api.post("/v1/articles", articleBody(tenant.projectId, { title: title + "😀" }));
    expect(tooLong.status).toBe(422);
    expect(tooLong.body.errors.title).toEqual(["The title field must not be greater than 255 characters."]);
    expect((await wordUsage(stack, tenant.accountId)).reserved).toBe(before.reserved);
  });

  test("a keyword of 80 emoji is accepted; 81 is refused", async () => {
    const ok = await api.post("/v1/articles", articleBody(tenant.projectId, { keywords: ["😀".repeat(80)] }));
    expect(ok.status).toBe(201);
    expect(ok.body.data.keywords).toEqual(["😀".repeat(80)]);
    const refused = await api.post("/v1/articles", articleBody(tenant.projectId, { keywords: ["😀".repeat(81)] }));
    expect(refused.status).toBe(422);
    expect(Object.keys(refused.body.errors)).toEqual(["keywords.0"]);
  });
});

describe("keyword errors name the position sent", () => {
  test("blank entries before a bad one do not shift its index", async () => {
    const res = await api.post("/v1/articles", articleBody(tenant.projectId, { keywords: ["", "  ", "coffee", "x".repeat(81), 7] }));
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({
      "keywords.3": ["The keywords.3 field must not be greater than 80 characters."],
      "keywords.4": ["The keywords.4 field must be a string."],
    });
  });

  test("blank entries do not count toward the 15 allowed", async () => {
    const keywords = ["", ...Array.from({ length: 15 }, (_, i) => `kw${i}`), " "];
    const res = await api.post("/v1/articles", articleBody(tenant.projectId, { keywords }));
    expect(res.status).toBe(201);
    expect(res.body.data.keywords).toEqual(keywords.filter((k) => k.trim() !== ""));
  });
});
