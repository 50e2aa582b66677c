// Research feeding {research} in whole-stack runs: the runner searches the simulator's
// SearXNG-style endpoint through the real SearXNG client, fetches the pages through the SSRF
// guard (the simulator's origin is trusted explicitly), records the sources on the article and
// fails the article when nothing usable is found.
import { beforeAll, describe, expect, test } from "bun:test";
import { apiClient, type ApiClient } from "../harness/http.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { createTenant, type Tenant } from "../harness/tenants.ts";
import { createArticle } from "../harness/articles.ts";
import { articleBody, createWorkflow, finished, marker, researchSources, runOf, simulatorCalls, waitForArticle, wordUsage } from "./generation-support.ts";

let stack: TestStack;
let api: ApiClient;
let tenant: Tenant;

beforeAll(async () => {
  stack = await useStack();
  tenant = await createTenant(stack);
  api = apiClient(stack.baseUrl, tenant.token);
});

describe("research", () => {
  test("a built-in article with research cites the sources it found, recorded on the article", async () => {
    const created = await createArticle(api, articleBody(tenant.projectId, { research_enabled: true, target_keyword: "espresso grinder burrs", target_word_count: 120 }));
    const done = await waitForArticle(api, created.external_id, finished, 60_000);
    expect(done.status).toBe("completed");

    const sources = await researchSources(stack, created.external_id);
    expect(sources.length).toBeGreaterThanOrEqual(1);
    expect(sources.length).toBeLessThanOrEqual(5);
    expect(sources.map((s) => s.position)).toEqual(sources.map((_, i) => i + 1));
    for (const s of sources) {
      expect(s.url).toStartWith(`${stack.simulatorUrl}/pages/`);
      expect(s.wordCount).toBeGreaterThanOrEqual(100);
      expect(s.wordCount).toBeLessThanOrEqual(1000);
      expect(s.fetchedAt).toBeDefined();
    }
    // The research step's prompt carried the numbered sources.
    const prompts = await simulatorCalls(stack, sources[0]!.url);
    expect(prompts.calls.some((c) => c.prompt.includes(`[1] ${sources[0]!.title} — ${sources[0]!.url}`))).toBe(true);
  }, 90_000);

  test("{research} is a numbered list within the article's limits; searchers' questions reach the FAQ guidance", async () => {
    const type = marker("research");
    await createWorkflow(api, tenant.projectId, type, [
      { user: "[[sim:echo]]{research}\n=====\n{requirements}", include_research: true, include_requirements: true },
    ]);
    const created = await createArticle(
      api,
      articleBody(tenant.projectId, {
        article_type: type,
        research_enabled: true,
        target_keyword: "french press coffee",
        research_max_sources: 2,
        research_min_content_words: 50,
        research_max_words_per_source: 100,
        include_faq: true,
      }),
    );
    const done = await waitForArticle(api, created.external_id, finished, 60_000);
    expect(done.status).toBe("completed");
    const [research, requirements] = done.content.split("\n=====\n");
    expect(research).toStartWith("[1] ");
    expect(research).toContain("\n\n[2] ");
    expect(research).not.toContain("[3] ");
    expect(research).toContain(`${stack.simulatorUrl}/pages/`);
    const sources = await researchSources(stack, created.external_id);
    expect(sources.map((s) => s.wordCount).every((n) => n >= 50 && n <= 100)).toBe(true);
    expect(requirements).toContain("FAQ");
    expect(requirements).toContain("Prefer these real questions searchers ask");
  }, 60_000);

  test("research with no usable source fails the article after its retries, with the reason, words released", async () => {
    const own = await createTenant(stack);
    const ownApi = apiClient(stack.baseUrl, own.token);
    const created = await createArticle(ownApi, articleBody(own.projectId, { research_enabled: true, target_keyword: "nothing-usable decaf" }));
    const failed = await waitForArticle(ownApi, created.external_id, (a) => a.status === "failed", 60_000);
    expect(failed.content).toBeNull();
    // The reason as the client reads it on the article (the runner's own record is not the API).
    expect(failed.failure_reason).toBeString();
    expect(failed.failure_reason).toContain("no usable sources");
    // No step ran: research comes before the first step that includes it.
    expect((await runOf(stack, created.external_id))!.steps).toEqual([]);
    expect(Number((await wordUsage(stack, own.accountId)).reservedWords)).toBe(0);
  }, 90_000);
});
