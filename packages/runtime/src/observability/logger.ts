import { pino, stdTimeFunctions, type DestinationStream } from "pino";
import { currentContext } from "../context/context.js";

export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";

export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** Any field holding an Error is written as class, message and stack, whatever its name. */
function serializeValue(value: unknown): unknown {
  if (!(value instanceof Error)) return value;
  const code = (value as { code?: unknown }).code;
  return { class: value.name, message: value.message, ...(code !== undefined ? { code } : {}), stack: value.stack };
}

/**
 * One JSON line per record (pino), on stderr unless `write` is given. Records made while a request or a job
 * runs carry its tenant and request id, and inside a job its id, task and attempt, read from the async
 * context at the moment of the call, so a log search for a request finds the lines of every job it caused.
 */
export function createLogger(params: { service: string; level: LogLevel; write?: (line: string) => void }): Logger {
  const destination: DestinationStream = params.write
    ? { write: (chunk: string) => params.write!(chunk.endsWith("\n") ? chunk.slice(0, -1) : chunk) }
    : pino.destination({ fd: 2, sync: true });
  const base = pino(
    {
      level: params.level,
      base: { service: params.service },
      timestamp: stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      // Call fields win over these: a log about another job may name it explicitly.
      mixin: contextFields,
    },
    destination,
  );
  const log = (level: "debug" | "info" | "warn" | "error") => (message: string, fields?: Record<string, unknown>) => {
    if (!base.isLevelEnabled(level)) return;
    base[level](fields ? serializeFields(fields) : {}, message);
  };
  return { debug: log("debug"), info: log("info"), warn: log("warn"), error: log("error") };
}

function serializeFields(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) out[key] = serializeValue(value);
  return out;
}

function contextFields(): Record<string, unknown> {
  const context = currentContext();
  if (!context) return {};
  const job = context.job;
  return {
    ...(context.tenantId ? { tenant_id: context.tenantId } : {}),
    ...(context.requestId ? { request_id: context.requestId } : {}),
    ...(job ? { job_id: job.id, task: job.task, attempt: job.attempts } : {}),
  };
}
