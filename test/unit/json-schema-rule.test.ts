import { describe, expect, test } from "bun:test";
import { checkJsonSchemaRule } from "../../services/workflow-catalog/src/domain/json-schema-rule.ts";

const obj = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: "object",
  properties,
  required: Object.keys(properties),
  additionalProperties: false,
  ...extra,
});

describe("checkJsonSchemaRule: passing schemas", () => {
  test("a strict outline schema passes", () => {
    const schema = obj({
      title: { type: "string" },
      sections: { type: "array", items: obj({ heading: { type: "string" }, key_points: { type: "array", items: { type: "string" } } }) },
    });
    expect(checkJsonSchemaRule(schema)).toBeNull();
  });

  test("nullable types, anyOf, $defs with $ref and an empty object pass", () => {
    const schema = {
      ...obj({
        author: { type: ["object", "null"], properties: { name: { type: "string" } }, required: ["name"], additionalProperties: false },
        value: { anyOf: [{ type: "string" }, { type: "number" }] },
        link: { $ref: "#/$defs/link" },
        nothing: { type: "object", additionalProperties: false },
      }),
      $defs: { link: obj({ url: { type: "string" } }) },
    };
    expect(checkJsonSchemaRule(schema)).toBeNull();
  });
});

describe("checkJsonSchemaRule: failures name the path", () => {
  test("top level must be an object schema", () => {
    expect(checkJsonSchemaRule(null)).toMatch(/^json_schema:/);
    expect(checkJsonSchemaRule([])).toMatch(/^json_schema:/);
    expect(checkJsonSchemaRule({ type: "array", items: { type: "string" } })).toBe(
      'json_schema: the top level must be an object schema (type "object")',
    );
    expect(checkJsonSchemaRule({ anyOf: [obj({})] })).toMatch(/top level must be an object schema/);
  });

  test("top-level object without additionalProperties false", () => {
    expect(checkJsonSchemaRule({ type: "object", properties: { a: { type: "string" } }, required: ["a"] })).toBe(
      "json_schema: objects need additionalProperties false",
    );
  });

  test("nested object without additionalProperties false", () => {
    const schema = obj({ author: { type: "object", properties: { name: { type: "string" } }, required: ["name"] } });
    expect(checkJsonSchemaRule(schema)).toBe("json_schema.properties.author: objects need additionalProperties false");
  });

  test("additionalProperties true or a schema is not enough", () => {
    expect(checkJsonSchemaRule(obj({}, { additionalProperties: true }))).toBe(
      "json_schema: objects need additionalProperties false",
    );
    expect(checkJsonSchemaRule(obj({}, { additionalProperties: { type: "string" } }))).toBe(
      "json_schema: objects need additionalProperties false",
    );
  });

  test("required must cover every property", () => {
    const schema = { ...obj({ a: { type: "string" }, b: { type: "string" }, c: { type: "string" } }), required: ["a"] };
    expect(checkJsonSchemaRule(schema)).toBe(
      "json_schema: objects need a required list covering all their properties (missing: b, c)",
    );
    const noRequired = { type: "object", properties: { a: { type: "string" } }, additionalProperties: false };
    expect(checkJsonSchemaRule(noRequired)).toMatch(/missing: a/);
  });

  test("required naming a non-existent property", () => {
    expect(checkJsonSchemaRule({ ...obj({ a: { type: "string" } }), required: ["a", "ghost"] })).toBe(
      "json_schema.required: names properties that do not exist (ghost)",
    );
  });

  test("arrays need explicit items", () => {
    expect(checkJsonSchemaRule(obj({ sections: { type: "array" } }))).toBe(
      "json_schema.properties.sections.items: arrays need explicit items",
    );
    expect(checkJsonSchemaRule(obj({ tags: { type: ["array", "null"], items: true } }))).toBe(
      "json_schema.properties.tags.items: arrays need explicit items",
    );
  });

  test("objects inside array items are checked", () => {
    const schema = obj({ sections: { type: "array", items: { type: "object", properties: { heading: { type: "string" } }, additionalProperties: false } } });
    expect(checkJsonSchemaRule(schema)).toBe(
      "json_schema.properties.sections.items: objects need a required list covering all their properties (missing: heading)",
    );
  });

  test("anyOf / oneOf / allOf branches and $defs / definitions are walked", () => {
    expect(checkJsonSchemaRule(obj({ v: { anyOf: [{ type: "string" }, { type: "object", properties: {} }] } }))).toBe(
      "json_schema.properties.v.anyOf[1]: objects need additionalProperties false",
    );
    expect(checkJsonSchemaRule(obj({ v: { oneOf: [{ type: "array" }] } }))).toBe(
      "json_schema.properties.v.oneOf[0].items: arrays need explicit items",
    );
    expect(checkJsonSchemaRule(obj({ v: { allOf: [] } }))).toMatch(/^json_schema\.properties\.v\.allOf:/);
    expect(checkJsonSchemaRule({ ...obj({}), $defs: { item: { type: "object" } } })).toBe(
      "json_schema.$defs.item: objects need additionalProperties false",
    );
    expect(checkJsonSchemaRule({ ...obj({}), definitions: { list: { type: "array" } } })).toBe(
      "json_schema.definitions.list.items: arrays need explicit items",
    );
  });

  test("an object implied by properties without a type is still checked", () => {
    expect(checkJsonSchemaRule(obj({ meta: { properties: { a: { type: "string" } } } }))).toBe(
      "json_schema.properties.meta: objects need additionalProperties false",
    );
  });

  test("malformed type and odd property names", () => {
    expect(checkJsonSchemaRule(obj({ a: { type: 3 } }))).toBe(
      "json_schema.properties.a: type must be a string or a non-empty array of strings",
    );
    expect(checkJsonSchemaRule(obj({ "my key": { type: "array" } }))).toBe(
      'json_schema.properties["my key"].items: arrays need explicit items',
    );
    expect(checkJsonSchemaRule(obj({ a: "string" }))).toBe("json_schema.properties.a: must be a schema object");
  });
});
