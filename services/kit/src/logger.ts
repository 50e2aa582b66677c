// One JSON line per event on stdout (errors on stderr). Secrets never reach it: callers log ids,
// not tokens, and as a second line of defence values under names that look like credentials are
// masked at any depth, as are strings that are bearer credentials.
//
// LOG_LEVEL (debug, info, warn, error, silent; any case) sets the least severe level written;
// silent keeps only errors. Any other value is a ConfigError naming LOG_LEVEL.

import { ConfigError, envOptional } from "./config.ts";
import { activeTraceId } from "./tracing.ts";
import { currentRequestId } from "./request-context.ts";

type Fields = Record<string, unknown>;

export interface Logger {
  debug(message: string, fields?: Fields): void;
  info(message: string, fields?: Fields): void;
  warn(message: string, fields?: Fields): void;
  error(message: string, fields?: Fields): void;
}

export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";

/** The least severe level each LOG_LEVEL writes: silent keeps only errors. */
const THRESHOLD: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3, silent: 3 };
const LOG_LEVELS = Object.keys(THRESHOLD) as LogLevel[];

/** LOG_LEVEL, info when unset; a value that is not a level is a ConfigError. */
export function logLevel(env: Record<string, string | undefined> = process.env): LogLevel {
  const value = envOptional(env, "LOG_LEVEL");
  if (value === undefined) return "info";
  const level = value.toLowerCase();
  if (!Object.hasOwn(THRESHOLD, level)) throw new ConfigError("LOG_LEVEL", `expected one of ${LOG_LEVELS.join(", ")}, got "${value}"`);
  return level as LogLevel;
}

const SECRET_FIELD = /token|secret|password|authorization|cookie|api_?key|private_?key/i;
const BEARER = /^bearer\s+\S/i;
const REDACTED = "[redacted]";
/** Objects deeper than this are not walked: they are written as a placeholder, never in the clear. */
const MAX_DEPTH = 6;
/** The objects above the value being masked, to write a cycle as a placeholder (one stack: masking is synchronous). */
const above: object[] = [];

/**
 * The value with its secrets masked; the value itself when nothing needed masking, so fields of
 * plain values cost one pass and no copy.
 */
function maskValue(value: unknown, depth: number): unknown {
  if (typeof value === "string") return BEARER.test(value) ? "Bearer [redacted]" : value;
  if (typeof value !== "object" || value === null) return typeof value === "bigint" ? value.toString() : value;
  if (value instanceof Error) return maskValue(value.message, depth);
  if (ArrayBuffer.isView(value)) return value;
  if (above.includes(value)) return "[circular]";
  if (depth >= MAX_DEPTH) return "[too deep]";
  above.push(value);
  try {
    if (Array.isArray(value)) {
      let out: unknown[] | undefined;
      for (let i = 0; i < value.length; i++) {
        const masked = maskValue(value[i], depth + 1);
        if (masked !== value[i]) (out ??= value.slice())[i] = masked;
      }
      return out ?? value;
    }
    return maskFields(value as Fields, depth);
  } finally {
    above.pop();
  }
}

function maskFields(fields: Fields, depth: number): Fields {
  let out: Fields | undefined;
  for (const key of Object.keys(fields)) {
    const value = fields[key];
    const masked = SECRET_FIELD.test(key) ? REDACTED : maskValue(value, depth + 1);
    if (masked !== value) (out ??= { ...fields })[key] = masked;
  }
  return out ?? fields;
}

/** The fields as they are written: secrets masked, errors as their message (exported for tests). */
export function maskSecrets(fields: Fields): Fields {
  const base = above.length;
  above.push(fields);
  try {
    return maskFields(fields, 0);
  } finally {
    above.length = base;
  }
}

const ignore = () => {};

export function createLogger(service: string): Logger {
  const threshold = THRESHOLD[logLevel()];
  const write = (level: string, message: string, fields?: Fields) => {
    // The request's trace id, when a span is recording, ties the line to the trace of its request.
    const traceId = activeTraceId();
    // The request id of the work in progress (request-context.ts), unless the line names one itself.
    const requestId = currentRequestId();
    const line = JSON.stringify({
      time: new Date().toISOString(),
      level,
      service,
      message,
      ...(requestId ? { request_id: requestId } : {}),
      ...(traceId ? { trace_id: traceId } : {}),
      ...(fields && maskSecrets(fields)),
    });
    (level === "error" ? process.stderr : process.stdout).write(line + "\n");
  };
  return {
    debug: threshold <= THRESHOLD.debug ? (m, f) => write("debug", m, f) : ignore,
    info: threshold <= THRESHOLD.info ? (m, f) => write("info", m, f) : ignore,
    warn: threshold <= THRESHOLD.warn ? (m, f) => write("warn", m, f) : ignore,
    error: (m, f) => write("error", m, f),
  };
}
