// One JSON line per event on stdout (errors on stderr), written by pino. Secrets never reach it:
// callers log ids, not tokens, and as a second line of defence values under names that look like
// credentials are masked at any depth, as are strings that are bearer credentials. Fields that are
// not credentials by name but must not be kept (personal data, a payload) are redacted by the paths
// in LOG_REDACT_PATHS, pino's path syntax: `account.email`, `*.phone`, `headers["x-forwarded-for"]`.
//
// LOG_LEVEL (debug, info, warn, error, silent; any case) sets the least severe level written;
// silent keeps only errors. Any other value, like a malformed path, is a ConfigError naming it.

import pino from "pino";
import { ConfigError, envOptional } from "./env.ts";
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

const LOG_LEVELS: LogLevel[] = ["debug", "info", "warn", "error", "silent"];

/** LOG_LEVEL, info when unset; a value that is not a level is a ConfigError. */
export function logLevel(env: Record<string, string | undefined> = process.env): LogLevel {
  const value = envOptional(env, "LOG_LEVEL");
  if (value === undefined) return "info";
  const level = value.toLowerCase();
  if (!(LOG_LEVELS as string[]).includes(level)) throw new ConfigError("LOG_LEVEL", `expected one of ${LOG_LEVELS.join(", ")}, got "${value}"`);
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

/** The keys every line has of its own: a path may not hide them, or the line says nothing. */
const LINE_KEYS = ["*", "time", "level", "service", "message", "request_id", "trace_id"];

/** LOG_REDACT_PATHS as a list of pino redaction paths (their syntax is checked by pino). */
export function logRedactPaths(env: Record<string, string | undefined> = process.env): string[] {
  const paths = (envOptional(env, "LOG_REDACT_PATHS") ?? "")
    .split(",")
    .map((path) => path.trim())
    .filter(Boolean);
  const hiding = paths.find((path) => LINE_KEYS.includes(path));
  if (hiding) throw new ConfigError("LOG_REDACT_PATHS", `"${hiding}" would hide the line's own ${hiding === "*" ? "fields" : hiding}; name the fields to redact`);
  return paths;
}

const ignore = () => {};

/** Lines that say nothing about a request: the mixin's answer, made once and never merged into. */
const NO_REQUEST = Object.freeze({});

/**
 * The request id of the work in progress (request-context.ts) and, when a span is recording, its
 * trace id: they tie a line to its request. A line naming either itself wins (pino merges the
 * call's fields over these).
 */
function requestFields(): object {
  const requestId = currentRequestId();
  const traceId = activeTraceId();
  if (!requestId && !traceId) return NO_REQUEST;
  if (!traceId) return { request_id: requestId };
  return requestId ? { request_id: requestId, trace_id: traceId } : { trace_id: traceId };
}

export function createLogger(service: string): Logger {
  const level = logLevel();
  const paths = logRedactPaths();
  // Two pino loggers rather than one over a multistream (a third slower per line): errors to
  // stderr, always written; the other levels to stdout down to LOG_LEVEL. They write through
  // process.stdout/stderr rather than pino's own file descriptor writer, so a line is in order
  // with anything else the process writes there.
  const lines = (minimum: pino.LevelWithSilent, stream: NodeJS.WriteStream) => {
    try {
      return pino(
        {
          level: minimum,
          base: { service },
          messageKey: "message",
          timestamp: () => `,"time":"${new Date().toISOString()}"`,
          formatters: { level: (label) => ({ level: label }) },
          mixin: requestFields,
          // pino's default merges the fields into the mixin's object; nothing to add, nothing to copy.
          mixinMergeStrategy: (fields, mixed) => (mixed === NO_REQUEST ? fields : Object.assign(mixed, fields)),
          ...(paths.length ? { redact: { paths, censor: REDACTED } } : {}),
        },
        { write: (line: string) => stream.write(line) },
      );
    } catch (error) {
      // pino refuses a malformed redaction path when the logger is made.
      throw new ConfigError("LOG_REDACT_PATHS", error instanceof Error ? error.message : String(error));
    }
  };
  const out = lines(level === "silent" || level === "error" ? "silent" : level, process.stdout);
  const err = lines("error", process.stderr);
  // A level below LOG_LEVEL is a no-op, decided once: its fields are not even masked.
  const at = (to: pino.Logger, method: pino.Level): Logger["info"] =>
    to.isLevelEnabled(method) ? (message, fields) => (fields ? to[method](maskSecrets(fields), message) : to[method](message)) : ignore;
  return { debug: at(out, "debug"), info: at(out, "info"), warn: at(out, "warn"), error: at(err, "error") };
}
