// The generated TypeScript client (clients/typescript) against the whole stack: create an article
// and poll it until it is completed, as docs/api.md shows.
import { beforeAll, expect, test } from "bun:test";
import { createClient } from "../../clients/typescript/src/client";
import { createArticle, getArticle, type Article } from "../../clients/typescript/src";
import { useStack, type TestStack } from "../harness/stack.ts";
import { createTenant, type Tenant } from "../harness/tenants.ts";

let stack: TestStack;
let tenant: Tenant;

beforeAll(async () => {
  stack = await useStack();
  tenant = await createTenant(stack);
});

test("creates an article and polls it to completion", async () => {
  const client = createClient({ baseUrl: stack.baseUrl, auth: () => tenant.token });
  const created = await createArticle({
    client,
    headers: { "Idempotency-Key": crypto.randomUUID() },
    body: { project_id: tenant.projectId, title: "How to brew pour-over coffee", article_type: "blog_post", target_word_count: 800, tone: "friendly", point_of_view: "second_person", language: "en" },
  });
  expect(created.response?.status).toBe(201);
  let article: Article = created.data!.data;
  expect(article.status).toBe("queued");

  const deadline = Date.now() + 45_000;
  while (article.status !== "completed" && article.status !== "failed" && Date.now() < deadline) {
    await Bun.sleep(250);
    const polled = await getArticle({ client, path: { id: article.external_id }, throwOnError: true });
    article = polled.data.data;
  }
  expect(article.status).toBe("completed");
  expect(article.content).toBeString();
  expect(article.actual_word_count).toBeGreaterThan(0);

  // Errors come back typed too: a 404 is the plain error shape.
  const missing = await getArticle({ client, path: { id: "999999999" } });
  expect(missing.response?.status).toBe(404);
  expect(missing.error).toEqual({ message: "Article not found.", request_id: expect.any(String) });
}, 60_000);
