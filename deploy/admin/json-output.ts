// Proto messages as plain JSON for stdout: snake_case keys, ISO times, enum names, and 64-bit
// integers as JSON numbers (ids and word counts stay far below 2^53).
import { ScalarType, toJson, type DescMessage, type MessageShape } from "@bufbuild/protobuf";

const INT64 = new Set([ScalarType.INT64, ScalarType.UINT64, ScalarType.SINT64, ScalarType.FIXED64, ScalarType.SFIXED64]);

function numbersFor(desc: DescMessage, json: any): any {
  if (json === null || typeof json !== "object") return json;
  for (const field of desc.fields) {
    const key = field.name;
    const value = json[key];
    if (value === undefined) continue;
    const convert = (v: any) => (field.message ? numbersFor(field.message, v) : field.scalar !== undefined && INT64.has(field.scalar) ? Number(v) : v);
    json[key] = field.fieldKind === "list" ? value.map(convert) : field.fieldKind === "map" ? value : convert(value);
  }
  return json;
}

export function asJson<D extends DescMessage>(schema: D, message: MessageShape<D>): Record<string, any> {
  return numbersFor(schema, toJson(schema, message, { useProtoFieldName: true, alwaysEmitImplicit: true }));
}
