// Reading the environment: each value validated against what it must be, and a bad one is one
// clear line naming the variable and a non-zero exit (see failOnConfigError), never a stack trace.
// Kept apart from config.ts so the modules that config.ts gathers settings from (the workload
// identity's) can use these readers without importing config.ts back.
export class ConfigError extends Error {
  constructor(readonly variable: string, problem: string) {
    super(`${variable}: ${problem}`);
  }
}

export type Env = Record<string, string | undefined>;

function raw(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === "" ? undefined : value.trim();
}

export function envString(env: Env, name: string, fallback: string): string {
  return raw(env, name) ?? fallback;
}

export function envOptional(env: Env, name: string): string | undefined {
  return raw(env, name);
}

export function envInt(env: Env, name: string, fallback: number, range: { min?: number; max?: number } = {}): number {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value)) throw new ConfigError(name, `expected a whole number, got "${value}"`);
  const n = Number(value);
  if (range.min !== undefined && n < range.min) throw new ConfigError(name, `must be at least ${range.min}, got ${n}`);
  if (range.max !== undefined && n > range.max) throw new ConfigError(name, `must be at most ${range.max}, got ${n}`);
  return n;
}

export function envPort(env: Env, name: string, fallback: number): number {
  return envInt(env, name, fallback, { min: 0, max: 65535 });
}

export function envBool(env: Env, name: string, fallback: boolean): boolean {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  if (/^(true|1|yes)$/i.test(value)) return true;
  if (/^(false|0|no)$/i.test(value)) return false;
  throw new ConfigError(name, `expected true or false, got "${value}"`);
}

export function envUrl(env: Env, name: string, fallback: string, protocols: string[]): string {
  const value = raw(env, name) ?? fallback;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(name, `not a valid URL: "${redactUrl(value)}"`);
  }
  if (!protocols.includes(url.protocol)) {
    throw new ConfigError(name, `expected a ${protocols.map((p) => p.replace(":", "://")).join(" or ")} URL, got "${redactUrl(value)}"`);
  }
  return value;
}

export function envIntList(env: Env, name: string, fallback: number[]): number[] {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  const parts = value.split(",").map((p) => p.trim());
  if (parts.length === 0 || parts.some((p) => !/^\d+$/.test(p))) {
    throw new ConfigError(name, `expected comma-separated whole numbers, got "${value}"`);
  }
  return parts.map(Number);
}

/** Hides a password in a URL so configuration errors never print a secret. */
export function redactUrl(value: string): string {
  return value.replace(/\/\/([^:/@]+):([^@]+)@/, "//$1:***@");
}

/** Runs fn; a ConfigError becomes one line on stderr and exit code 2. */
export function failOnConfigError<T>(fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`configuration error: ${error.message}`);
      process.exit(2);
    }
    throw error;
  }
}
