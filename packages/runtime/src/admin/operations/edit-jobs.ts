import { TRPCError } from "@trpc/server";
import { Job, type JobPriority } from "../../core/job.js";
import type { JobInfo } from "../../core/queue-backend.js";
import { JfastError } from "../../errors/jfast-error.js";
import { hasKeyOption, limitKeyOf } from "../../core/limits.js";
import type { QueueProvider } from "../../queue/queue-provider.js";
import { auditedCall, type OperatorContext } from "../audit-call.js";
import { backendCall } from "../queue-access.js";

/** One changed place of a payload, as the audit entry keeps it (values redacted as the payload is). */
export interface PayloadChange {
  path: string;
  before?: unknown;
  after?: unknown;
}

/** How many changed places an audit entry keeps; the count says how many there were. */
const MAX_CHANGES = 100;

/**
 * Retries a dead letter with an edited payload (deadLetters.retry with `payload`, `jfast jobs retry <id> --payload`).
 * The edited job is a new job (a new id, attempts at 0, the same task, tenant, request, priority) checked against
 * the task's schema like any enqueue (PAYLOAD_INVALID: nothing changes); once it is enqueued the dead letter is
 * discarded. In that order on every backend, so a failure in between leaves the dead letter, never loses the job.
 * The audit entry names both ids and keeps the before/after of each changed place.
 */
export async function retryDeadWithPayload(
  ctx: OperatorContext,
  queue: QueueProvider,
  params: { id: string; payload: unknown; queueName?: string | undefined },
): Promise<{ retried: string[]; missing: string[]; jobId: string | null }> {
  const info = await backendCall(queue, "reading the dead letter", () => deadLetter(queue, params.id));
  if (!info) return { retried: [], missing: [params.id], jobId: null };
  const before = info.job;
  const job = new Job({
    task: before.task,
    payload: params.payload,
    priority: before.priority as JobPriority,
    tenantId: before.tenantId,
    requestId: before.requestId,
    trace: before.trace,
    ...(before.maxAttempts !== null ? { maxAttempts: before.maxAttempts } : {}),
  });
  await checked(queue, job);
  const changes = payloadChanges(ctx.sources.redaction.payload(before.payload), ctx.sources.redaction.payload(params.payload));
  return auditedCall(
    ctx,
    { action: "deadLetters.retry", ids: [params.id], filter: { edited: "payload", ...(params.queueName ? { queue: params.queueName } : {}) } },
    async () => {
      await backendCall(queue, "enqueueing the edited job", () => queue.enqueue(job));
      await backendCall(queue, "discarding the dead letter", () => queue.backend.discardDead({ ids: [params.id] }));
      return { retried: [params.id], missing: [], jobId: job.id };
    },
    (result) => ({ retried: 1, missing: 0, jobId: result.jobId, changed: changes.length, changes: changes.slice(0, MAX_CHANGES) }),
  );
}

/** A dead letter by id, or null. A broker that cannot look one up by id is read from its dead-letter list. */
async function deadLetter(queue: QueueProvider, id: string): Promise<JobInfo | null> {
  try {
    const info = await queue.backend.getJob({ id });
    return info?.state === "dead" ? info : null;
  } catch (error) {
    if ((error as { code?: unknown }).code !== "NOT_SUPPORTED") throw error;
    const dead = await queue.backend.listDead({ limit: 1000 });
    const found = dead.find((d) => d.job.id === id);
    return found ? { job: found.job, state: "dead", lockedBy: null, lockedUntil: null, diedAt: found.diedAt } : null;
  }
}

/** Refuses a payload the task's schema refuses, before anything changes (PAYLOAD_INVALID, its issues in the message). */
export async function checked(queue: QueueProvider, job: Job): Promise<void> {
  try {
    await queue.checkPayloads([job]);
  } catch (error) {
    // Not passed as the cause: the refusal's `issues` are not zod's, which the error formatter reads from a cause.
    if (error instanceof JfastError) throw new TRPCError({ code: "BAD_REQUEST", message: `${error.message} [${error.code}]` });
    throw error;
  }
}

/** The places where two JSON values differ, by dot path ("(payload)" for the whole). */
export function payloadChanges(before: unknown, after: unknown, path = ""): PayloadChange[] {
  const here = path || "(payload)";
  if (isObject(before) && isObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    return keys.flatMap((key) => {
      const child = path ? `${path}.${key}` : key;
      if (!(key in after)) return [{ path: child, before: before[key] }];
      if (!(key in before)) return [{ path: child, after: after[key] }];
      return payloadChanges(before[key], after[key], child);
    });
  }
  return JSON.stringify(before) === JSON.stringify(after) ? [] : [{ path: here, before, after }];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Makes a job of one of the service's tasks (jobs.create, the dashboard's "New job" and "Duplicate"): checked
 * against the task's schema, enqueued as the service's own code would, audited with its task and tenant.
 */
export async function createJobFor(
  ctx: OperatorContext,
  queue: QueueProvider,
  params: { task: string; payload: unknown; delayMs?: number | undefined; priority?: number | undefined; tenantId?: string | null | undefined },
): Promise<{ id: string; task: string; availableAt: string }> {
  if (!ctx.sources.registry.get(params.task)) {
    throw new TRPCError({ code: "BAD_REQUEST", message: `no task "${params.task}" in this service; overview.tasks lists them` });
  }
  const job = new Job({
    task: params.task,
    payload: params.payload,
    ...(params.delayMs ? { delayMs: params.delayMs } : {}),
    ...(params.priority !== undefined ? { priority: params.priority as JobPriority } : {}),
    tenantId: params.tenantId ?? null,
  });
  await checked(queue, job);
  return auditedCall(
    ctx,
    { action: "jobs.create", ids: [job.id], filter: { task: job.task, ...(job.tenantId ? { tenant: job.tenantId } : {}) } },
    async () => {
      await backendCall(queue, "enqueueing the job", () => queue.enqueue(job));
      return { id: job.id, task: job.task, availableAt: job.availableAt.toISOString() };
    },
    (result) => ({ created: 1, availableAt: result.availableAt, ...(params.delayMs ? { delayMs: params.delayMs } : {}), ...(params.priority !== undefined ? { priority: params.priority } : {}) }),
  );
}

/** What jobs.update answers: the job as it waits now. */
export interface JobUpdateResult {
  id: string;
  task: string;
  /** "ready" when due now, "scheduled" when waiting for its time. */
  state: "ready" | "scheduled";
  priority: number;
  availableAt: string;
  /** Places of the payload that changed (0 when the payload was not edited or is the same). */
  payloadChanges: number;
}

/**
 * Edits a waiting or scheduled job in place (jobs.update, `jfast jobs update`, the drawer's Edit): its payload
 * (checked against the task's schema, PAYLOAD_INVALID, and sealed like any enqueue when the task encrypts), its
 * priority, its run time. One atomic step on the backend, only while the job still waits: a job claimed, finished
 * or dead meanwhile is refused (CONFLICT, JOB_NOT_EDITABLE naming its state) with nothing changed. The audit entry
 * keeps the before/after of each changed place, priority and run time. RabbitMQ: METHOD_NOT_SUPPORTED.
 */
export async function updateWaitingJob(
  ctx: OperatorContext,
  provider: QueueProvider,
  params: { id: string; payload?: unknown; priority?: number | undefined; runAt?: Date | undefined },
): Promise<JobUpdateResult> {
  if (params.payload === undefined && params.priority === undefined && params.runAt === undefined) {
    throw new TRPCError({ code: "BAD_REQUEST", message: "nothing to change: give a payload, a priority or a run time" });
  }
  const found = await backendCall(provider, "reading the job", () => locate(provider, params.id));
  if (!found) throw new TRPCError({ code: "NOT_FOUND", message: `no job with id ${params.id}` });
  const { backend, info } = found;
  if (info.state !== "ready") throw notEditable(params.id, info.state);
  const before = info.job;
  if (params.priority !== undefined && params.priority !== before.priority && !backend.capabilities.priority) {
    throw new TRPCError({ code: "BAD_REQUEST", message: `the ${backend.kind} queue keeps no priorities (docs/tasks.md#priority)` });
  }
  if (params.payload !== undefined) {
    await checked(provider, new Job({ task: before.task, payload: params.payload }));
    keepsItsKey(ctx, before, params.payload);
  }
  const redact = ctx.sources.redaction;
  const changes = params.payload === undefined ? [] : payloadChanges(redact.payload(before.payload), redact.payload(params.payload));
  const edited = [params.payload !== undefined && "payload", params.priority !== undefined && "priority", params.runAt !== undefined && "runAt"].filter(Boolean).join(",");
  return auditedCall(
    ctx,
    { action: "jobs.update", ids: [params.id], filter: { task: before.task, edited } },
    async () => {
      const result = await backendCall(provider, "updating the job", () =>
        backend.updateJob({ id: params.id, task: before.task, payload: params.payload, priority: params.priority, availableAt: params.runAt }),
      );
      if (!result.done) {
        if (result.state === null) throw new TRPCError({ code: "NOT_FOUND", message: `no job with id ${params.id} (it was deleted meanwhile)` });
        throw notEditable(params.id, result.state === "ready" ? "changed meanwhile" : result.state);
      }
      const availableAt = (params.runAt ?? new Date(before.availableAt)).toISOString();
      return {
        id: params.id,
        task: before.task,
        state: Date.parse(availableAt) > Date.now() ? ("scheduled" as const) : ("ready" as const),
        priority: params.priority ?? before.priority,
        availableAt,
        payloadChanges: changes.length,
      };
    },
    (result) => ({
      updated: 1,
      changed: changes.length,
      changes: changes.slice(0, MAX_CHANGES),
      ...(params.priority !== undefined ? { priority: { before: before.priority, after: params.priority } } : {}),
      ...(params.runAt !== undefined ? { runAt: { before: before.availableAt, after: result.availableAt } } : {}),
    }),
  );
}

/** The job and the backend of the queue holding it; a queue that cannot edit answers METHOD_NOT_SUPPORTED first. */
async function locate(provider: QueueProvider, id: string): Promise<{ backend: QueueProvider["backend"]; info: JobInfo } | null> {
  const backends = provider.queues.size <= 1 ? [provider.backend] : [...provider.queues.values()].map((q) => q.backend);
  for (const backend of backends) {
    if (!backend.capabilities.jobActions) {
      try {
        await backend.updateJob({ id, task: "" });
      } catch (error) {
        if ((error as { code?: unknown }).code !== "NOT_SUPPORTED") throw error;
        throw new TRPCError({ code: "METHOD_NOT_SUPPORTED", message: `${(error as Error).message.split("\n")[0]!} [NOT_SUPPORTED]`, cause: error });
      }
    }
    const info = await backend.getJob({ id });
    if (info) return { backend, info };
  }
  return null;
}

/**
 * A task whose jobs carry a key from their payload (per-key concurrency or rate, fairness, orderedBy) keeps the key
 * computed at enqueue: a payload giving another key is refused (KEY_CHANGED) rather than left under the old one.
 */
function keepsItsKey(ctx: OperatorContext, before: JobInfo["job"], payload: unknown): void {
  const options = ctx.sources.registry.get(before.task)?.options;
  if (!options || !hasKeyOption(options)) return;
  const keyOf = (p: unknown): string | null | undefined => {
    try {
      return limitKeyOf(options, { id: before.id, task: before.task, tenantId: before.tenantId, payload: p });
    } catch {
      return undefined;
    }
  };
  const was = keyOf(before.payload);
  const now = keyOf(payload);
  if (was === undefined || now === undefined || was !== now) {
    throw new TRPCError({
      code: "BAD_REQUEST",
      message: `task "${before.task}" keys its jobs by their payload and this payload gives ${now === undefined ? "no valid key" : `the key "${now}"`}${was === undefined ? "" : `, not "${was}"`}: the job would stay under its old key; cancel it and make a new job instead (docs/admin-api.md#editing-a-waiting-job) [KEY_CHANGED]`,
    });
  }
}

function notEditable(id: string, state: string): TRPCError {
  return new TRPCError({
    code: "CONFLICT",
    message: `job ${id} is ${state}: only a waiting or scheduled job can be edited, nothing was changed (docs/admin-api.md#editing-a-waiting-job) [JOB_NOT_EDITABLE]`,
  });
}
