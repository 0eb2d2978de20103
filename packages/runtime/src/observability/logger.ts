import { currentContext } from "../context/context.js";

export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";
const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/**
 * One JSON line per record on stderr. Records made while a job runs name it (job id, task, attempt) and carry
 * the tenant and request id, so a log search for a job finds every line it produced.
 */
export function createLogger(params: { service: string; level: LogLevel; write?: (line: string) => void }): Logger {
  const threshold = ORDER[params.level];
  const write = params.write ?? ((line: string) => process.stderr.write(line + "\n"));
  const log = (level: Exclude<LogLevel, "silent">) => (message: string, fields: Record<string, unknown> = {}) => {
    if (ORDER[level] < threshold) return;
    const context = currentContext();
    const job = context?.job;
    const record: Record<string, unknown> = {
      time: new Date().toISOString(),
      level,
      service: params.service,
      msg: message,
      ...(context?.tenantId ? { tenant_id: context.tenantId } : {}),
      ...(context?.requestId ? { request_id: context.requestId } : {}),
      ...(job ? { job_id: job.id, task: job.task, attempt: job.attempts } : {}),
      ...fields,
    };
    write(JSON.stringify(record, (_key, value) => (value instanceof Error ? { class: value.name, message: value.message } : value)));
  };
  return { debug: log("debug"), info: log("info"), warn: log("warn"), error: log("error") };
}
