// One JSON line per event on stdout. Secrets never reach it: callers log ids, not tokens, and
// fields whose names look like credentials are masked as a second line of defence.

import { activeTraceId } from "./tracing.ts";

const SECRET_FIELD = /token|secret|password|authorization|api_?key/i;

export interface Logger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

function mask(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    out[key] = SECRET_FIELD.test(key) ? "[redacted]" : value instanceof Error ? value.message : value;
  }
  return out;
}

export function createLogger(service: string): Logger {
  const quiet = process.env.LOG_LEVEL === "silent";
  const write = (level: string, message: string, fields: Record<string, unknown> = {}) => {
    if (quiet && level !== "error") return;
    // The request's trace id, when a span is recording, ties the line to the trace of its request.
    const traceId = activeTraceId();
    const line = JSON.stringify({ time: new Date().toISOString(), level, service, message, ...(traceId ? { trace_id: traceId } : {}), ...mask(fields) });
    (level === "error" ? process.stderr : process.stdout).write(line + "\n");
  };
  return {
    info: (m, f) => write("info", m, f),
    warn: (m, f) => write("warn", m, f),
    error: (m, f) => write("error", m, f),
  };
}
