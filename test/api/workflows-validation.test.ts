// Validation of workflow step bodies (spec 2.3 rule 5, 2.4, 2.5, 4.5, 4.7, 7): 422 with
// {message, errors: {field: [messages]}}, and nothing stored.
import { beforeAll, describe, expect, test } from "bun:test";
import { useStack, type TestStack } from "../harness/stack.ts";
import { BUILTIN_ARTICLE_TYPES } from "../../services/workflow-catalog/src/domain/builtin-workflows/index.ts";
import { stepBody, workflowTenant, type WorkflowTenant } from "./workflows-fixtures.ts";

let stack: TestStack;
let t: WorkflowTenant;
beforeAll(async () => {
  stack = await useStack();
  t = await workflowTenant(stack);
});

const RESERVED = "custom workflows cannot use reserved global article type names";

function expectValidation(res: { status: number; body: any }, fields: string[]) {
  expect(res.status).toBe(422);
  expect(typeof res.body.message).toBe("string");
  expect(res.body.success).toBeUndefined();
  expect(Object.keys(res.body.errors).sort()).toEqual([...fields].sort());
  for (const messages of Object.values(res.body.errors)) {
    expect(Array.isArray(messages)).toBe(true);
    for (const m of messages as unknown[]) expect(typeof m).toBe("string");
  }
}

async function typeExists(type: string): Promise<boolean> {
  return (await t.api.get(`${t.base}?article_type=${encodeURIComponent(type)}`)).body.data.length > 0;
}

describe("creating a step", () => {
  test("every reserved built-in name is refused, in any letter case", async () => {
    for (const name of [...BUILTIN_ARTICLE_TYPES, "Blog_Post", "NEWS"]) {
      const res = await t.api.post(t.base, stepBody({ article_type: name }));
      expectValidation(res, ["article_type"]);
      expect(res.body.errors.article_type).toEqual([RESERVED]);
    }
  });

  test("missing required fields are each reported", async () => {
    const res = await t.api.post(t.base, {});
    expectValidation(res, ["article_type", "step_number", "step_name", "system", "user", "output_format"]);
    expect(res.body.errors.step_name[0]).toContain("required");
  });

  test("a duplicate step_number within the workflow is reported on step_number", async () => {
    await t.api.post(t.base, stepBody({ article_type: "dup_numbers", step_number: 3 }));
    const res = await t.api.post(t.base, stepBody({ article_type: "dup_numbers", step_number: 3, step_name: "Another" }));
    expectValidation(res, ["step_number"]);
    expectValidation(await t.api.post(t.base, stepBody({ article_type: "dup_numbers", step_number: 3, timeout_seconds: 1 })), ["step_number", "timeout_seconds"]);
    const other = await t.api.post(t.base, stepBody({ article_type: "other_numbers", step_number: 3 }));
    expect(other.status).toBe(201);
  });

  test("lengths: article_type and step_name 255, step_icon 50", async () => {
    const ok = await t.api.post(t.base, stepBody({ article_type: "a".repeat(255), step_name: "n".repeat(255), step_icon: "i".repeat(50) }));
    expect(ok.status).toBe(201);
    const res = await t.api.post(t.base, stepBody({ article_type: "a".repeat(256), step_name: "n".repeat(256), step_icon: "i".repeat(51) }));
    expectValidation(res, ["article_type", "step_name", "step_icon"]);
    expect(res.body.errors.step_icon[0]).toContain("50");
  });

  test("timeout_seconds must be 30 to 600", async () => {
    for (const timeout of [29, 601, 0, -5, 1e12]) {
      expectValidation(await t.api.post(t.base, stepBody({ article_type: "timeouts", timeout_seconds: timeout })), ["timeout_seconds"]);
    }
    for (const [n, timeout] of [[1, 30], [2, 600]]) {
      const res = await t.api.post(t.base, stepBody({ article_type: "timeouts", step_number: n, timeout_seconds: timeout }));
      expect(res.status).toBe(201);
      expect(res.body.data.timeout_seconds).toBe(timeout);
    }
  });

  test("output_format must be text, json or markdown", async () => {
    expectValidation(await t.api.post(t.base, stepBody({ output_format: "html" })), ["output_format"]);
    for (const [n, format] of ["text", "json", "markdown"].entries()) {
      expect((await t.api.post(t.base, stepBody({ article_type: "formats", step_number: n + 1, output_format: format }))).status).toBe(201);
    }
  });

  test("step_number must be a whole number from 1", async () => {
    for (const value of [0, -1, 1.5, "2", 1e12]) {
      expectValidation(await t.api.post(t.base, stepBody({ article_type: "bad_numbers", step_number: value })), ["step_number"]);
    }
  });

  test("wrong JSON types are reported per field", async () => {
    const res = await t.api.post(t.base, stepBody({ step_name: 5, include_research: "yes", json_schema: "not an object", system: ["x"] }));
    expectValidation(res, ["step_name", "include_research", "json_schema", "system"]);
  });

  test("the JSON schema rule: objects need additionalProperties false and a complete required list; arrays need items", async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ type: "object", properties: { a: { type: "string" } }, required: ["a"] }, "json_schema"],
      [{ type: "object", properties: { a: { type: "string" }, b: { type: "string" } }, required: ["a"], additionalProperties: false }, "json_schema"],
      [
        { type: "object", properties: { list: { type: "array" } }, required: ["list"], additionalProperties: false },
        "json_schema.properties.list",
      ],
      [
        {
          type: "object",
          properties: { list: { type: "array", items: { type: "object", properties: { x: { type: "string" } }, required: ["x"] } } },
          required: ["list"],
          additionalProperties: false,
        },
        "json_schema.properties.list.items",
      ],
    ];
    for (const [schema, path] of cases) {
      const res = await t.api.post(t.base, stepBody({ article_type: "schemas", output_format: "json", json_schema: schema }));
      expectValidation(res, ["json_schema"]);
      expect(res.body.errors.json_schema[0]).toContain(path);
    }
    expect(await typeExists("schemas")).toBe(false);
  });

  test("a json_schema needs output_format json", async () => {
    const schema = { type: "object", properties: {}, required: [], additionalProperties: false };
    expectValidation(await t.api.post(t.base, stepBody({ output_format: "markdown", json_schema: schema })), ["json_schema"]);
  });

  test("unknown template variables are rejected, naming the variable", async () => {
    const res = await t.api.post(t.base, stepBody({ system: "You write for {audience}.", user: "Write {title} about {topic} and {step_0_output}." }));
    expectValidation(res, ["system", "user"]);
    expect(res.body.errors.system[0]).toContain("{audience}");
    expect(res.body.errors.user[0]).toContain("{topic}");
    expect(res.body.errors.user[0]).toContain("{step_0_output}");
    // JSON examples in prompts are not variables.
    expect((await t.api.post(t.base, stepBody({ article_type: "json_examples", user: 'Answer like {"answer": "..."} for {title}.' }))).status).toBe(201);
  });

  test("all problems of one body are reported together", async () => {
    const res = await t.api.post(
      t.base,
      stepBody({ article_type: "listicle", timeout_seconds: 5, output_format: "json", json_schema: { type: "object" }, user: "{nope}", step_icon: "x".repeat(60) }),
    );
    expectValidation(res, ["article_type", "timeout_seconds", "json_schema", "user", "step_icon"]);
  });

  test("malformed JSON and a non-object body are 422", async () => {
    expectValidation(await t.api.post(t.base, undefined, { rawBody: '{"article_type": "x",' }), ["body"]);
    expectValidation(await t.api.post(t.base, [1, 2]), ["body"]);
  });
});

describe("updating a step", () => {
  test("the same rules apply to the fields sent; nothing changes on failure", async () => {
    const step = (await t.api.post(t.base, stepBody({ article_type: "update_rules", step_number: 1 }))).body.data;
    await t.api.post(t.base, stepBody({ article_type: "update_rules", step_number: 2 }));
    const url = `${t.base}/${step.id}`;
    expect((await t.api.patch(url, { article_type: "tutorial" })).body.errors.article_type).toEqual([RESERVED]);
    expectValidation(await t.api.patch(url, { step_number: 2 }), ["step_number"]);
    expectValidation(await t.api.patch(url, { step_number: 2, output_format: "doc" }), ["step_number", "output_format"]);
    expectValidation(await t.api.put(url, { timeout_seconds: 601, output_format: "pdf", step_icon: "y".repeat(51) }), ["timeout_seconds", "output_format", "step_icon"]);
    expectValidation(await t.api.patch(url, { user: "{unknown_thing}" }), ["user"]);
    expectValidation(await t.api.patch(url, { json_schema: { type: "object", properties: {} } }), ["json_schema"]);
    expectValidation(await t.api.patch(url, { step_name: "" }), ["step_name"]);
    expectValidation(await t.api.patch(url, { step_name: null, step_number: null }), ["step_name", "step_number"]);
    const after = (await t.api.get(url)).body.data;
    expect(after).toEqual(step);
    const workflow = (await t.api.get(`${t.base}?article_type=update_rules`)).body.data[0];
    expect(workflow.revision).toBe(2);
  });

  test("a forward {step_N_output} on update is accepted with a warning", async () => {
    const step = (await t.api.post(t.base, stepBody({ article_type: "update_warning" }))).body.data;
    const res = await t.api.patch(`${t.base}/${step.id}`, { user: "Continue {step_4_output}." });
    expect(res.status).toBe(200);
    expect(res.body.message).toContain("{step_4_output}");
  });
});
