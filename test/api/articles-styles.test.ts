// Brand voices and image presets (issue item 2): created by an operator with the CLI in one
// project, then referenced by that project's articles.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { runAdmin } from "../harness/admin-cli.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { apiClient } from "../harness/http.ts";
import { createTenant, type Tenant } from "../harness/tenants.ts";
import { articleBody } from "../harness/articles.ts";
import { storeClient } from "../harness/service-clients.ts";
import { holdGeneration, type GenerationHold } from "./articles-fixtures.ts";

let stack: TestStack;
let hold: GenerationHold;
let tenant: Tenant;

beforeAll(async () => {
  stack = await useStack();
  hold = await holdGeneration(stack);
  tenant = await createTenant(stack);
});

afterAll(async () => {
  await hold.release();
});

const admin = (...args: string[]) => runAdmin(stack, ...args);

describe("brand voices and image presets", () => {
  test("the CLI creates them in a project and an article of that project uses them", async () => {
    const voice = await admin("brand-voice", "create", "--project", String(tenant.projectId), "--name", "Warm", "--description", "Warm, plain-spoken, no jargon.");
    expect(voice.code).toBe(0);
    expect(voice.json).toMatchObject({ project_id: tenant.projectId, name: "Warm", description: "Warm, plain-spoken, no jargon." });
    const preset = await admin("image-preset", "create", "--project", String(tenant.projectId), "--name", "Film", "--style", "35mm film, soft light");
    expect(preset.code).toBe(0);
    expect(preset.json).toMatchObject({ project_id: tenant.projectId, name: "Film", style: "35mm film, soft light" });

    const res = await apiClient(stack.baseUrl, tenant.token).post("/v1/articles", articleBody(tenant.projectId, { brand_voice_id: voice.json.id, image_preset_id: preset.json.id, image_count: 1 }));
    expect(res.status).toBe(201);
    const { article } = await storeClient(stack).getArticle({ identifier: String(res.body.data.id) });
    expect(Number(article!.settings!.brandVoiceId)).toBe(voice.json.id);
    expect(Number(article!.settings!.imagePresetId)).toBe(preset.json.id);

    const shown = await admin("article", "show", "--id", res.body.data.external_id);
    expect(shown.code).toBe(0);
    expect(shown.json.settings.brand_voice_id).toBe(voice.json.id);
  });

  test("a project that does not exist is refused with the field named", async () => {
    const res = await admin("brand-voice", "create", "--project", "999999999", "--name", "Ghost", "--description", "Nobody's voice.");
    expect(res.code).not.toBe(0);
    expect(JSON.parse(res.stderr).errors).toHaveProperty("project_id");
    const blank = await admin("image-preset", "create", "--project", String(tenant.projectId), "--name", "Blank", "--style", " ");
    expect(blank.code).not.toBe(0);
    expect(JSON.parse(blank.stderr).errors).toHaveProperty("style");
  });
});
