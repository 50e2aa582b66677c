// Flag parsing for the operator CLI: `--name value` pairs, checked against the flags the command
// declares (FlagSpec), then read and validated one by one by the command.
import { timestampFromDate } from "@bufbuild/protobuf/wkt";

export class UsageError extends Error {}

/** One flag a command takes. Its usage line and the parser's checks are both made from these. */
export interface FlagSpec<N extends string = string> {
  /** Without the dashes: "monthly-words". */
  name: N;
  /** How its value reads in the usage line ("ID", "true|false", "N|none"); absent for a switch. */
  value?: string;
  /** Shown in brackets in the usage line. (The command itself refuses a missing required flag.) */
  optional: boolean;
}

/** A flag the command cannot do without: `--name N`. */
export const flag = <const N extends string>(name: N, value: string): FlagSpec<N> => ({ name, value, optional: false });
/** A flag the command can do without: `[--name N]`. */
export const optionalFlag = <const N extends string>(name: N, value: string): FlagSpec<N> => ({ name, value, optional: true });
/** A switch: `[--batch]` on its own means true; `--batch true|false` reads too. */
export const switchFlag = <const N extends string>(name: N): FlagSpec<N> => ({ name, optional: true });

/** The usage line of a list of flags: `--plan ID [--name N] [--batch]`. */
export function usageOf(specs: readonly FlagSpec[]): string {
  return specs
    .map((s) => {
      const text = s.value === undefined ? `--${s.name}` : `--${s.name} ${s.value}`;
      return s.optional ? `[${text}]` : text;
    })
    .join(" ");
}

/** The flags given, by name; only declared names appear. A switch given on its own is "true". */
export type Flags<N extends string = string> = { [K in N]?: string };

/**
 * `--name value`, `--name=value` (the way to give a value that starts with `--`) and, for a switch,
 * `--name` alone. An undeclared flag, a value left out and a flag given twice are usage errors.
 */
export function parseFlags<N extends string>(argv: string[], specs: readonly FlagSpec<N>[]): Flags<N>;
/**
 * Without declarations (deploy/chaos checks the names itself): any name reads, a flag without a
 * value is "true", and a flag given again replaces its value.
 */
export function parseFlags(argv: string[]): Record<string, string>;
export function parseFlags(argv: string[], specs?: readonly FlagSpec[]): Record<string, string> {
  const declared = specs && new Map(specs.map((s) => [s.name, s]));
  const flags = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith("--")) throw new UsageError(`unexpected argument "${arg}"`);
    const [name, inline] = arg.slice(2).split(/=(.*)/s, 2);
    const spec = declared?.get(name);
    if (declared && !spec) throw new UsageError(unknownFlag(name, specs!));
    if (declared && flags.has(name)) throw new UsageError(`--${name} is given more than once`);
    const next = argv[i + 1];
    if (inline !== undefined) flags.set(name, inline);
    else if (next !== undefined && !next.startsWith("--")) flags.set(name, argv[++i]);
    else if (!spec || spec.value === undefined) flags.set(name, "true");
    else throw new UsageError(`--${name} needs a value`);
  }
  return Object.fromEntries(flags);
}

function unknownFlag(given: string, specs: readonly FlagSpec[]): string {
  if (specs.length === 0) return `unknown flag --${given}; this command takes no flags`;
  const near = given === "" ? [] : nearest(given, specs.map((s) => s.name));
  const list = near.map((n) => `--${n}`);
  const guess = list.length === 0 ? "" : `; did you mean ${list.length === 1 ? list[0] : `${list.slice(0, -1).join(", ")} or ${list.at(-1)}`}?`;
  return `unknown flag --${given}${guess}`;
}

/** Declared names within edit distance 2 of the given one, or that it begins or that begin it; nearest first, at most three. */
function nearest(given: string, names: string[]): string[] {
  return names
    .map((name, order) => ({ name, order, distance: editDistance(given, name) }))
    .filter((c) => c.distance <= 2 || c.name.startsWith(given) || given.startsWith(c.name))
    .sort((a, b) => a.distance - b.distance || a.order - b.order)
    .slice(0, 3)
    .map((c) => c.name);
}

/** Insertions, deletions, substitutions and swaps of neighbours (optimal string alignment). */
export function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

export function required<N extends string>(flags: Flags<N>, name: NoInfer<N>): string {
  const value = flags[name];
  if (value === undefined || value === "") throw new UsageError(`--${name} is required`);
  return value;
}

export function int<N extends string>(flags: Flags<N>, name: NoInfer<N>): number | undefined {
  const value = flags[name];
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`--${name} must be a whole number, got "${value}"`);
  return Number(value);
}

export function requiredInt<N extends string>(flags: Flags<N>, name: NoInfer<N>): number {
  required(flags, name);
  return int(flags, name)!;
}

export const id = <N extends string>(flags: Flags<N>, name: NoInfer<N>) => BigInt(requiredInt(flags, name));

export function idList<N extends string>(flags: Flags<N>, name: NoInfer<N>): bigint[] {
  const value = flags[name];
  if (value === undefined || value === "") return [];
  const parts = value.split(",").map((p) => p.trim());
  if (parts.some((p) => !/^\d+$/.test(p))) throw new UsageError(`--${name} must be comma-separated ids, got "${value}"`);
  return parts.map(BigInt);
}

export function bool<N extends string>(flags: Flags<N>, name: NoInfer<N>): boolean | undefined {
  const value = flags[name];
  if (value === undefined) return undefined;
  if (value === "true") return true;
  if (value === "false") return false;
  throw new UsageError(`--${name} must be true or false, got "${value}"`);
}

export function timestamp<N extends string>(flags: Flags<N>, name: NoInfer<N>) {
  const value = flags[name];
  if (value === undefined) return undefined;
  const date = new Date(value);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(date.getTime())) throw new UsageError(`--${name} must be an ISO 8601 time, got "${value}"`);
  return timestampFromDate(date);
}
