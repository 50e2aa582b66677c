// Step templates as the runner renders them (spec 2.5), observed through custom workflows whose
// steps ask the simulator to echo their user prompt: the article content is then exactly what
// the last step rendered.
import { beforeAll, describe, expect, test } from "bun:test";
import { apiClient, type ApiClient } from "../harness/http.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { createTenant, type Tenant } from "../harness/tenants.ts";
import { createArticle } from "../harness/articles.ts";
import { articleBody, createWorkflow, finished, marker, waitForArticle } from "./generation-support.ts";

let stack: TestStack;
let tenant: Tenant;
let api: ApiClient;

beforeAll(async () => {
  stack = await useStack();
  tenant = await createTenant(stack);
  api = apiClient(stack.baseUrl, tenant.token);
});

const ALL_VARIABLES =
  "[[sim:echo]]T={title}|K={target_keyword}|AT={article_type}|TONE={tone}|POV={point_of_view}|L={language}|C={country_targeting}|W={target_word_count}|AC={additional_context}|AI={additional_instruction}";

async function generate(type: string, extra: Record<string, unknown> = {}) {
  const created = await createArticle(api, articleBody(tenant.projectId, { article_type: type, ...extra }));
  const done = await waitForArticle(api, created.external_id, finished);
  expect(done.status).toBe("completed");
  return done;
}

describe("template variables", () => {
  const settings = {
    title: "Pour-over basics",
    target_keyword: "pour over",
    tone: "casual",
    point_of_view: "first_person",
    language: "de",
    country_targeting: "DE",
    target_word_count: 300,
    additional_context: "Background notes",
    additional_instruction: "Mention the kettle",
  };

  test("every variable is filled from the article when its flag is set", async () => {
    const type = marker("vars");
    await createWorkflow(api, tenant.projectId, type, [{ user: ALL_VARIABLES, include_additional_context: true, include_additional_instruction: true }]);
    const done = await generate(type, settings);
    expect(done.content).toBe(
      `T=Pour-over basics|K=pour over|AT=${type}|TONE=casual|POV=first_person|L=de|C=DE|W=300|AC=Background notes|AI=Mention the kettle`,
    );
  });

  test("gated variables stay empty unless their flag is set on that step", async () => {
    const type = marker("gated");
    await createWorkflow(api, tenant.projectId, type, [
      { user: "[[sim:echo]]AC={additional_context}|AI={additional_instruction}|R={requirements}|O={outline}|RS={research}" },
    ]);
    const done = await generate(type, settings);
    expect(done.content).toBe("AC=|AI=|R=|O=|RS=");
  });

  test("{requirements} carries the editorial brief", async () => {
    const type = marker("req");
    await createWorkflow(api, tenant.projectId, type, [{ user: "[[sim:echo]]{requirements}", include_requirements: true }]);
    const done = await generate(type, { ...settings, language: "en", include_faq: true, include_key_takeaways: true, heading_capitalization: "sentence", target_audience: "new home baristas" });
    expect(done.content).toStartWith("Editorial requirements:");
    for (const part of ["about 300 words", "Tone: casual", "Point of view: first person", "Market: readers in Germany", "Audience: new home baristas", "Key takeaways", "FAQ", "sentence case"]) {
      expect(done.content).toContain(part);
    }
  });

  test("substitution is single-pass: values that look like variables stay literal", async () => {
    const type = marker("single");
    await createWorkflow(api, tenant.projectId, type, [
      { user: "[[sim:echo]]first" },
      { user: "[[sim:echo]]T={title}|AC={additional_context}", include_additional_context: true },
    ]);
    const done = await generate(type, { title: "About {target_keyword} and {step_1_output}", target_keyword: "never expanded", additional_context: "{title} {step_1_output}" });
    expect(done.content).toBe("T=About {target_keyword} and {step_1_output}|AC={title} {step_1_output}");
  });
});

describe("step outputs", () => {
  test("{step_N_output} resolves by step number; missing and later steps resolve to nothing", async () => {
    const type = marker("steps");
    const steps = await createWorkflow(api, tenant.projectId, type, [
      { user: "[[sim:echo]]alpha" },
      { user: "[[sim:echo]]beta" },
      { user: "[[sim:echo]]A={step_1_output}|B={step_2_output}|C={step_3_output}|Z={step_9_output}" },
    ]);
    // Deleting step 2 leaves numbers 1 and 3: {step_2_output} now names no step.
    expect((await api.delete(`/v1/projects/${tenant.projectId}/workflows/${steps[1].id}`)).status).toBe(200);
    const done = await generate(type);
    expect(done.content).toBe("A=alpha|B=|C=|Z=");
  });

  test("{outline} is the output of the workflow's first json step", async () => {
    const type = marker("outline");
    const schema = {
      type: "object",
      properties: { sections: { type: "array", items: { type: "string" } } },
      required: ["sections"],
      additionalProperties: false,
    };
    await createWorkflow(api, tenant.projectId, type, [
      { user: "Plan an article about {title}", output_format: "json", json_schema: schema },
      { user: "[[sim:echo]]OUTLINE={outline}|SAME={step_1_output}", include_outline: true },
    ]);
    const done = await generate(type);
    const [outline, same] = done.content.replace("OUTLINE=", "").split("|SAME=");
    expect(outline).toBe(same);
    expect(Array.isArray(JSON.parse(outline).sections)).toBe(true);
  });

  test("a final json step's envelope is kept as content and yields the description", async () => {
    const type = marker("envelope");
    const schema = {
      type: "object",
      properties: {
        article: {
          type: "object",
          properties: { content: { type: "string" }, meta_description: { type: "string" } },
          required: ["content", "meta_description"],
          additionalProperties: false,
        },
      },
      required: ["article"],
      additionalProperties: false,
    };
    await createWorkflow(api, tenant.projectId, type, [{ user: "Write about {title}", output_format: "json", json_schema: schema }]);
    const done = await generate(type);
    const envelope = JSON.parse(done.content);
    expect(typeof envelope.article.content).toBe("string");
    expect(done.description).toBe(envelope.article.meta_description.trim());
  });
});
