import { pino, stdTimeFunctions, type DestinationStream } from "pino";
import { currentContext } from "../context/context.js";
import type { Logger } from "../core/logger.js";

export type { Logger } from "../core/logger.js";
export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";

/** A pino logger as a service already has it (any pino version): pino's `(fields, message)` order. */
export interface PinoLogger {
  debug(fields: object, message?: string): void;
  info(fields: object, message?: string): void;
  warn(fields: object, message?: string): void;
  error(fields: object, message?: string): void;
  isLevelEnabled(level: string): boolean;
}

/**
 * pino's own methods also take `(message, ...args)`, so a pino logger type-checks as a `Logger` and would
 * silently drop every field as a printf argument: it is recognised at run time by the symbol every pino
 * instance carries (registered with Symbol.for, so shared across pino copies and versions).
 */
export function isPinoLogger(logger: unknown): logger is PinoLogger {
  return typeof logger === "object" && logger !== null && Symbol.for("pino.serializers") in logger;
}

/** The logger jfast writes through: a pino logger is wrapped, anything else is taken as a `Logger`. */
export function toLogger(logger: Logger | PinoLogger): Logger {
  return isPinoLogger(logger) ? fromPino(logger) : logger;
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
    },
    destination,
  );
  return fromPino(base);
}

/**
 * jfast's `(message, fields)` calls written through a pino logger, with the request and job fields of the
 * async context. The pino logger keeps its own level, bindings, serializers and destination.
 */
function fromPino(base: PinoLogger): Logger {
  const log = (level: "debug" | "info" | "warn" | "error") => (message: string, fields?: Record<string, unknown>) => {
    if (!base.isLevelEnabled(level)) return;
    // Call fields win over the context's: a log about another job may name it explicitly.
    base[level]({ ...contextFields(), ...(fields ? serializeFields(fields) : {}) }, message);
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
