import { CorruptJob } from "../../core/corrupt-job.js";
import { DEFAULT_PRIORITY, type AttemptError, type JobJSON } from "../../core/job.js";

/**
 * Turns what the scripts return into our types. A job hash keeps the JSON exactly as enqueued; the fields a
 * worker changes (attempts, errors, available_at) are kept beside it and laid over it here, so the stored
 * payload is never re-encoded on its way through Redis.
 */
export type StoredFields = [json: string | null, attempts: string | null, errors: string | null, availableAt: string | null];

/** The job, or an explanation of why the stored text is not one. Never throws. */
export function decodeJob(id: string, fields: StoredFields): { job: JobJSON } | { problem: string } {
  const [json, attempts, errors, availableAt] = fields;
  if (json === null) return { problem: "no job is stored under this id" };
  let base: unknown;
  try {
    base = JSON.parse(json);
  } catch (error) {
    return { problem: `the stored job is not valid JSON (${(error as Error).message})` };
  }
  if (!isJobShape(base)) return { problem: "the stored JSON is not a job (it needs at least an id and a task name)" };
  if (base.id !== id) return { problem: `the stored job says its id is "${String(base.id)}", not "${id}"` };
  const at = Number(availableAt);
  return {
    job: {
      ...base,
      // A job stored before priorities existed has none: the default, as it was claimed.
      priority: typeof base.priority === "number" ? base.priority : DEFAULT_PRIORITY,
      attempts: attempts === null ? base.attempts : Number(attempts),
      errors: errors === null ? base.errors : parseErrors(errors),
      availableAt: availableAt === null || !Number.isFinite(at) ? base.availableAt : new Date(at).toISOString(),
    },
  };
}

/** For listings (dead letters, job detail): a job that cannot be read still shows up, described. */
export function decodeJobForDisplay(id: string, fields: StoredFields): JobJSON {
  const decoded = decodeJob(id, fields);
  if ("job" in decoded) return decoded.job;
  return {
    id,
    task: CorruptJob.task,
    priority: DEFAULT_PRIORITY,
    payload: { raw: fields[0], problem: decoded.problem },
    attempts: Number(fields[1] ?? 0),
    maxAttempts: 1,
    availableAt: new Date(0).toISOString(),
    createdAt: new Date(0).toISOString(),
    tenantId: null,
    requestId: null,
    trace: null,
    errors: fields[2] === null ? [] : parseErrors(fields[2]),
    timeoutMs: null,
  };
}

function isJobShape(value: unknown): value is JobJSON {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const v = value as Record<string, unknown>;
  return typeof v.id === "string" && typeof v.task === "string" && v.task !== "" && typeof v.createdAt === "string";
}

function parseErrors(text: string): AttemptError[] {
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? (parsed as AttemptError[]) : [];
  } catch {
    return [{ attempt: 0, at: new Date(0).toISOString(), class: CorruptJob.errorClass, message: `unreadable error history: ${text.slice(0, 200)}` }];
  }
}

export function msToIso(value: string | null | undefined): string | null {
  if (value === null || value === undefined || value === "") return null;
  const ms = Number(value);
  return Number.isFinite(ms) ? new Date(ms).toISOString() : null;
}
