// Flag parsing for the operator CLI: `--name value` pairs, validated per command.
import { timestampFromDate } from "@bufbuild/protobuf/wkt";

export class UsageError extends Error {}

export type Flags = Record<string, string>;

export function parseFlags(argv: string[]): Flags {
  const flags: Flags = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith("--")) throw new UsageError(`unexpected argument "${arg}"`);
    const [name, inline] = arg.slice(2).split(/=(.*)/s, 2);
    if (inline !== undefined) flags[name] = inline;
    else if (argv[i + 1] !== undefined && !argv[i + 1].startsWith("--")) flags[name] = argv[++i];
    else flags[name] = "true";
  }
  return flags;
}

export function required(flags: Flags, name: string): string {
  const value = flags[name];
  if (value === undefined || value === "") throw new UsageError(`--${name} is required`);
  return value;
}

export function int(flags: Flags, name: string): number | undefined {
  const value = flags[name];
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`--${name} must be a whole number, got "${value}"`);
  return Number(value);
}

export function requiredInt(flags: Flags, name: string): number {
  required(flags, name);
  return int(flags, name)!;
}

export const id = (flags: Flags, name: string) => BigInt(requiredInt(flags, name));

export function idList(flags: Flags, name: string): bigint[] {
  const value = flags[name];
  if (value === undefined || value === "") return [];
  const parts = value.split(",").map((p) => p.trim());
  if (parts.some((p) => !/^\d+$/.test(p))) throw new UsageError(`--${name} must be comma-separated ids, got "${value}"`);
  return parts.map(BigInt);
}

export function bool(flags: Flags, name: string): boolean | undefined {
  const value = flags[name];
  if (value === undefined) return undefined;
  if (value === "true") return true;
  if (value === "false") return false;
  throw new UsageError(`--${name} must be true or false, got "${value}"`);
}

export function timestamp(flags: Flags, name: string) {
  const value = flags[name];
  if (value === undefined) return undefined;
  const date = new Date(value);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(date.getTime())) throw new UsageError(`--${name} must be an ISO 8601 time, got "${value}"`);
  return timestampFromDate(date);
}
