import type { JobJSON } from "../../core/job.js";

/** Between a worker and the isolate running a task's handler (docs/tasks.md#isolated-handlers). */
export type ToIsolate =
  /** First message: the tasks files to import before saying ready (their handlers' timeouts do not count imports). */
  | { type: "load"; files: ReadonlyArray<{ file: string; module: string | null }> }
  | { type: "run"; id: number; file: string; module: string | null; task: string; service: string; job: JobJSON }
  | { type: "abort"; id: number; reason: SentError };

export type FromIsolate =
  | { type: "ready" }
  | { type: "done"; id: number; value: unknown }
  | { type: "snooze"; id: number; ms: number }
  | { type: "failed"; id: number; error: SentError };

/** An error as it crosses to the worker: its class name, message and stack, and whether it is a PermanentError. */
export interface SentError {
  name: string;
  message: string;
  stack?: string | undefined;
  permanent?: boolean;
}

export function sendable(error: unknown): SentError {
  if (error instanceof Error) {
    return { name: error.name, message: error.message, stack: error.stack, permanent: error.name === "PermanentError" };
  }
  return { name: "Error", message: typeof error === "string" ? error : JSON.stringify(error) ?? String(error) };
}
