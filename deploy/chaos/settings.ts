// What a chaos run does, from flags (`npm run chaos -- --articles 40`) or CHAOS_* variables.
import { UsageError, parseFlags } from "../admin/args.ts";

export interface ChaosSettings {
  /** Articles to create (CHAOS_ARTICLES, --articles). */
  articles: number;
  /** Seconds between two faults (CHAOS_KILL_EVERY, --kill-every). */
  killEverySeconds: number;
  /** Seconds from the first creation until whatever is unfinished counts as stuck (CHAOS_DEADLINE, --deadline). */
  deadlineSeconds: number;
  /** Show the services' own logs (CHAOS_LOGS=1, --logs). */
  logs: boolean;
}

export const USAGE = "usage: npm run chaos -- [--articles N (100)] [--kill-every SECONDS (8)] [--deadline SECONDS (600)] [--logs]";

function positive(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined || value === "") return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new UsageError(`--${name} must be a positive number, got "${value}"`);
  return n;
}

export function chaosSettings(argv: string[], env: Record<string, string | undefined>): ChaosSettings {
  const flags = parseFlags(argv);
  const known = new Set(["articles", "kill-every", "deadline", "logs"]);
  for (const name of Object.keys(flags)) if (!known.has(name)) throw new UsageError(`unknown flag --${name}`);
  return {
    articles: Math.round(positive(flags.articles ?? env.CHAOS_ARTICLES, "articles", 100)),
    killEverySeconds: positive(flags["kill-every"] ?? env.CHAOS_KILL_EVERY, "kill-every", 8),
    deadlineSeconds: positive(flags.deadline ?? env.CHAOS_DEADLINE, "deadline", 600),
    logs: flags.logs === "true" || env.CHAOS_LOGS === "1",
  };
}
