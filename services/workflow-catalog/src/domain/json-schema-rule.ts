// The JSON schema rule of spec 2.4: "every object needs additionalProperties false and a required
// list covering all its properties; arrays need explicit items". It is the subset strict structured
// outputs accept, so a schema that passes here will not be refused by the model provider later,
// in the middle of a generation.

type Schema = Record<string, unknown>;

const ROOT = "json_schema";

// Subschema containers walked besides properties and items.
const SCHEMA_LISTS = ["anyOf", "oneOf", "allOf"] as const;
const SCHEMA_MAPS = ["$defs", "definitions"] as const;

function isPlainObject(value: unknown): value is Schema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

// Paths read like the schema itself: json_schema.properties.sections.items, …anyOf[1], …["odd key"].
function child(path: string, key: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

/** The declared types of a node, or a message when `type` is malformed. */
function declaredTypes(node: Schema, path: string): string[] | string {
  const type = node.type;
  if (type === undefined) return [];
  if (typeof type === "string") return [type];
  if (Array.isArray(type) && type.length > 0 && type.every((t) => typeof t === "string")) return type as string[];
  return `${path}: type must be a string or a non-empty array of strings`;
}

function checkObject(node: Schema, path: string): string | null {
  if (node.additionalProperties !== false) return `${path}: objects need additionalProperties false`;
  const properties = node.properties ?? {};
  if (!isPlainObject(properties)) return `${path}.properties: must be an object mapping names to schemas`;
  const names = Object.keys(properties);
  const required = node.required ?? [];
  if (!Array.isArray(required) || !required.every((r) => typeof r === "string")) {
    return `${path}.required: must be an array of property names`;
  }
  const missing = names.filter((name) => !required.includes(name));
  if (missing.length > 0) {
    return `${path}: objects need a required list covering all their properties (missing: ${missing.join(", ")})`;
  }
  // With additionalProperties false a required name that is not a property can never be satisfied.
  const unknown = required.filter((name) => !names.includes(name));
  if (unknown.length > 0) return `${path}.required: names properties that do not exist (${unknown.join(", ")})`;
  return null;
}

function checkNode(node: unknown, path: string): string | null {
  if (!isPlainObject(node)) return `${path}: must be a schema object`;
  const types = declaredTypes(node, path);
  if (typeof types === "string") return types;

  // A node with properties is an object schema even when its type was left out.
  if (types.includes("object") || node.properties !== undefined) {
    const problem = checkObject(node, path);
    if (problem) return problem;
    const properties = (node.properties ?? {}) as Schema;
    for (const [name, sub] of Object.entries(properties)) {
      const found = checkNode(sub, child(child(path, "properties"), name));
      if (found) return found;
    }
  }

  if (types.includes("array") || node.items !== undefined) {
    if (!isPlainObject(node.items)) return `${child(path, "items")}: arrays need explicit items`;
    const found = checkNode(node.items, child(path, "items"));
    if (found) return found;
  }

  for (const key of SCHEMA_LISTS) {
    const list = node[key];
    if (list === undefined) continue;
    if (!Array.isArray(list) || list.length === 0) return `${child(path, key)}: must be a non-empty array of schemas`;
    for (const [index, sub] of list.entries()) {
      const found = checkNode(sub, `${child(path, key)}[${index}]`);
      if (found) return found;
    }
  }

  for (const key of SCHEMA_MAPS) {
    const map = node[key];
    if (map === undefined) continue;
    if (!isPlainObject(map)) return `${child(path, key)}: must be an object mapping names to schemas`;
    for (const [name, sub] of Object.entries(map)) {
      const found = checkNode(sub, child(child(path, key), name));
      if (found) return found;
    }
  }
  return null;
}

/** null when the schema satisfies the rule, else one message naming the first offending path. */
export function checkJsonSchemaRule(schema: unknown): string | null {
  if (!isPlainObject(schema)) return `${ROOT}: must be a JSON schema object`;
  const types = declaredTypes(schema, ROOT);
  if (typeof types === "string") return types;
  // Structured outputs need an object at the top: the step's output is parsed as one JSON object.
  if (!types.includes("object")) return `${ROOT}: the top level must be an object schema (type "object")`;
  return checkNode(schema, ROOT);
}
