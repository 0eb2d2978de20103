import { JobState } from "../core/job-state.js";
import { JfastError } from "../errors/jfast-error.js";
import type { AttemptError } from "../core/job.js";
import type { JobInfo, ListState } from "../core/queue-backend.js";
import type { FlowDetail } from "../core/backend/flows.js";
import { subscriberJobId } from "../local-events/subscriber-jobs.js";
import type { RequestOutboxRow } from "../outbox/outbox-rows.js";
import type { QueueProvider } from "../queue/queue-provider.js";
import { findFlow, flowsRefusal, namedQueues } from "./operations/flows.js";
import { findJob } from "./queue-scope.js";
import type { Redaction } from "./redact.js";
import type { AdminSources } from "./sources.js";

/** What an entry of a timeline stands for (docs/admin-api.md#timeline). */
export const TraceKind = {
  job: "job",
  attempt: "attempt",
  /** A local event, seen through its subscriber jobs or its outbox row. */
  event: "event",
  /** The job that delivered a local event to one subscriber. */
  subscriber: "subscriber",
  flow: "flow",
  /** An outbox row carrying a job or a flow to another queue. */
  outbox: "outbox",
  /** An outbox row carrying an event to a Kafka topic: the hop to other services. */
  kafka: "kafka",
} as const;
export type TraceKind = (typeof TraceKind)[keyof typeof TraceKind];

/** A job's state (ready split into ready and scheduled), or what became of an attempt, an event or an outbox row. */
export const TraceOutcome = {
  ...JobState,
  scheduled: "scheduled",
  failed: "failed",
  pending: "pending",
  delivered: "delivered",
  published: "published",
} as const;
export type TraceOutcome = (typeof TraceOutcome)[keyof typeof TraceOutcome];

export interface TraceEntry {
  kind: TraceKind;
  /** The job's, event's, flow's or outbox row's id; an attempt's is `<job id>#<n>`. */
  id: string;
  service: string;
  /** The task, the event type, the flow's name or the row's destination. */
  name: string;
  startedAt: string;
  /** Null while it has not finished, or where the store keeps no finish time. */
  finishedAt: string | null;
  durationMs: number | null;
  outcome: TraceOutcome;
  /** The entry it belongs under: a job's flow, a subscriber job's event, an attempt's job. */
  parentId: string | null;
  requestId: string | null;
  /** The named queue of a job or flow. */
  queue?: string;
  /** The last error of a job or the error of a failed attempt, redacted: `Class: message`. */
  error?: string;
}

export interface TraceView {
  service: string;
  id: string;
  /** What the id named in this service: a job, a flow, or (neither) a request id. */
  matched: "job" | "flow" | "request";
  requestId: string | null;
  /** Oldest first. */
  entries: TraceEntry[];
  /** False when a store was read in a bounded window (no index by request id) or the limit cut the list. */
  complete: boolean;
  /** What this service could not show, and why. */
  notes: string[];
}

/** Jobs of one state read at most, newest first, where a backend keeps no index by request id. */
export const TRACE_WINDOW = 1_000;
const PAGE = 200;

/** What a timeline is read from: the admin API's sources, or the alerts evaluator's (docs/alerts.md#promises). */
export type TraceSources = Pick<AdminSources, "service" | "plugins" | "queue" | "outbox" | "redaction">;

/**
 * One service's share of a request's timeline (trace.get, `jfast trace`): the jobs carrying the request id (or the
 * job or flow named), their attempts, flows, subscriber jobs and events, and the outbox rows the request wrote.
 */
export async function gatherTrace(sources: TraceSources, id: string, limit: number): Promise<TraceView> {
  const service = sources.service.name;
  const queue = sources.queue();
  const notes: string[] = [];
  let complete = true;
  const jobs = new Map<string, { info: JobInfo; finishedAt: string | null; queue: string }>();
  const flows = new Map<string, { queue: string; flow: FlowDetail }>();
  let matched: TraceView["matched"] = "request";
  let requestId: string | null = id;

  const named = queue ? namedQueues(queue) : [];
  if (queue) {
    // A broker that cannot look a waiting job up by id (RabbitMQ) takes the id for a request id.
    const info = await findJob(queue, id).catch((error: unknown) => {
      if (error instanceof JfastError && error.code === "NOT_SUPPORTED") return null;
      throw error;
    });
    if (info) {
      matched = "job";
      requestId = info.job.requestId;
      jobs.set(info.job.id, { info, finishedAt: info.diedAt, queue: queueOfJob(queue, info) });
    } else if (!flowsRefusal(queue)) {
      const found = await findFlow(queue, id);
      if (found) {
        matched = "flow";
        flows.set(found.flow.id, found);
        requestId = null;
      }
    }
  } else {
    notes.push(sources.plugins.includes("queue") ? "the queue is not started in this process" : "this service does not enable the queue plugin");
  }

  if (queue && matched === "flow") {
    const [flow] = flows.values();
    for (const step of Object.values(flow!.flow.steps)) {
      const info = await backendOf(queue, flow!.queue).getJob({ id: step.jobId });
      if (info) {
        jobs.set(info.job.id, { info, finishedAt: step.finishedAt, queue: flow!.queue });
        requestId ??= info.job.requestId;
      }
    }
  }

  if (queue && requestId !== null) {
    for (const q of named) {
      if (jobs.size >= limit) break;
      if (q.backend.capabilities.requestIndex) {
        const rows = await q.backend.jobsByRequest({ requestId, limit: limit - jobs.size });
        for (const row of rows) if (!jobs.has(row.info.job.id)) jobs.set(row.info.job.id, { ...row, queue: q.name });
        continue;
      }
      complete = false;
      const states = q.backend.capabilities.listableStates;
      notes.push(windowNote(q.backend.kind, q.name, states));
      for (const state of states) {
        for (const info of await windowOf(q.backend, state, requestId)) {
          if (!jobs.has(info.job.id)) jobs.set(info.job.id, { info, finishedAt: info.diedAt, queue: q.name });
        }
      }
    }
    if (jobs.size >= limit) {
      complete = false;
      notes.push(`only the first ${limit} jobs are shown`);
    }
  }

  // Flows the request's jobs are steps of, and their steps' finish times (a step's own is kept with the flow).
  if (queue && !flowsRefusal(queue)) {
    for (const { info } of [...jobs.values()]) {
      const flowId = info.job.flow?.id;
      if (!flowId || flows.has(flowId)) continue;
      const found = await findFlow(queue, flowId);
      if (found) flows.set(flowId, found);
    }
    for (const { flow } of flows.values()) {
      for (const step of Object.values(flow.steps)) {
        const known = jobs.get(step.jobId);
        if (known && known.finishedAt === null) known.finishedAt = step.finishedAt;
      }
    }
  }

  const outbox = sources.outbox();
  const rows: RequestOutboxRow[] = outbox && requestId !== null ? await outbox.rowsByRequest({ requestId, limit }) : [];

  const entries = [
    ...[...flows.values()].map(({ queue: q, flow }) => flowEntry(service, q, flow, requestId)),
    ...[...jobs.values()].flatMap((job) => jobEntries(service, job, sources.redaction)),
    ...eventEntries(service, [...jobs.values()].map((j) => j.info), rows),
    ...rows.map((row) => outboxEntry(service, row, requestId)),
  ].sort((a, b) => Date.parse(a.startedAt) - Date.parse(b.startedAt) || order(a.kind) - order(b.kind));
  return { service, id, matched, requestId, entries, complete, notes };
}

function windowNote(kind: string, queue: string, states: readonly ListState[]): string {
  if (kind === "rabbitmq") {
    return `queue "${queue}" (RabbitMQ) keeps no finished job and cannot read a waiting message: only its dead letters are searched`;
  }
  return `queue "${queue}" (${kind}) keeps no index by request id: the newest ${TRACE_WINDOW} jobs of each state (${states.join(", ")}) were read`;
}

/** The request's jobs among the newest TRACE_WINDOW of one state. */
async function windowOf(backend: QueueProvider["backend"], state: ListState, requestId: string): Promise<JobInfo[]> {
  const found: JobInfo[] = [];
  let after: string | undefined;
  let read = 0;
  while (read < TRACE_WINDOW) {
    const page = await backend.listJobs({ state, order: "newest", limit: PAGE, after });
    read += PAGE;
    // A listing carries the last attempt's timing only: the job itself has every attempt (few jobs match).
    for (const info of page.rows) if (info.job.requestId === requestId) found.push((await backend.getJob({ id: info.job.id }).catch(() => null)) ?? info);
    if (page.next === null) break;
    after = page.next;
  }
  return found;
}

function backendOf(queue: QueueProvider, name: string): QueueProvider["backend"] {
  return namedQueues(queue).find((q) => q.name === name)?.backend ?? queue.backend;
}

function queueOfJob(queue: QueueProvider, info: JobInfo): string {
  return queue.queues.size === 1 ? [...queue.queues.keys()][0]! : queue.queueOf(info.job.task).name;
}

const KIND_ORDER: TraceKind[] = ["flow", "outbox", "event", "kafka", "job", "subscriber", "attempt"];
function order(kind: TraceKind): number {
  return KIND_ORDER.indexOf(kind);
}

function duration(startedAt: string, finishedAt: string | null): number | null {
  return finishedAt === null ? null : Math.max(0, Date.parse(finishedAt) - Date.parse(startedAt));
}

function outcomeOf(info: JobInfo): TraceOutcome {
  if (info.state === JobState.ready) return Date.parse(info.job.availableAt) > Date.now() ? TraceOutcome.scheduled : TraceOutcome.ready;
  return info.state;
}

/** A subscriber job's payload is the event it delivers, and its id is derived from the event's and its own name. */
function eventOf(info: JobInfo): { id: string; type: string; occurredAt: string } | null {
  const payload = info.job.payload as { id?: unknown; type?: unknown; occurredAt?: unknown } | null;
  if (!payload || typeof payload !== "object" || typeof payload.id !== "string" || typeof payload.type !== "string") return null;
  if (subscriberJobId(payload.id, info.job.task) !== info.job.id) return null;
  return { id: payload.id, type: payload.type, occurredAt: typeof payload.occurredAt === "string" ? payload.occurredAt : info.job.createdAt };
}

function jobEntries(service: string, job: { info: JobInfo; finishedAt: string | null; queue: string }, redaction: Redaction): TraceEntry[] {
  const { info, queue } = job;
  const event = eventOf(info);
  const startedAt = info.job.createdAt;
  const finishedAt = job.finishedAt ?? info.finishedAt ?? info.diedAt;
  const last = redaction.error(info.job.errors.at(-1) ?? null, info.job);
  const entry: TraceEntry = {
    kind: event ? TraceKind.subscriber : TraceKind.job,
    id: info.job.id,
    service,
    name: info.job.task,
    startedAt,
    finishedAt,
    durationMs: duration(startedAt, finishedAt),
    outcome: outcomeOf(info),
    parentId: event?.id ?? info.job.flow?.id ?? null,
    requestId: info.job.requestId,
    queue,
  };
  if (last && info.state !== JobState.completed) entry.error = `${last.class}: ${last.message}`;
  return [entry, ...attemptEntries(service, info, queue, redaction)];
}

/**
 * Each attempt with its start, end and worker where the backend records them (JobInfo.attempts, docs/jobs.md#timing);
 * else each failed attempt at the time it failed, from the job's errors (a point: its start is not kept).
 */
function attemptEntries(service: string, info: JobInfo, queue: string, redaction: Redaction): TraceEntry[] {
  const base = { kind: TraceKind.attempt, service, parentId: info.job.id, requestId: info.job.requestId, queue };
  const shown = (error: AttemptError | undefined | null): string | undefined => {
    const e = redaction.error(error ?? null, info.job);
    return e ? `${e.class}: ${e.message}${e.reason ? ` (${e.reason})` : ""}` : undefined;
  };
  if (info.attempts && info.attempts.length > 0) {
    return info.attempts.map((a): TraceEntry => {
      const error = shown(a.error);
      return {
        ...base,
        id: `${info.job.id}#${a.attempt}`,
        name: `${info.job.task} attempt ${a.attempt} on ${a.workerId}`,
        startedAt: a.startedAt,
        finishedAt: a.finishedAt,
        durationMs: a.durationMs,
        outcome: a.outcome === "snoozed" ? TraceOutcome.scheduled : a.outcome,
        ...(error ? { error } : {}),
      };
    });
  }
  return info.job.errors.map((e): TraceEntry => {
    const error = shown(e);
    return {
      ...base,
      id: `${info.job.id}#${e.attempt}`,
      name: `${info.job.task} attempt ${e.attempt}`,
      startedAt: e.at,
      finishedAt: e.at,
      durationMs: null,
      outcome: TraceOutcome.failed,
      ...(error ? { error } : {}),
    };
  });
}

function flowEntry(service: string, queue: string, flow: FlowDetail, requestId: string | null): TraceEntry {
  return {
    kind: TraceKind.flow,
    id: flow.id,
    service,
    name: flow.name ?? `${flow.kind} of ${flow.total}`,
    startedAt: flow.createdAt,
    finishedAt: flow.finishedAt,
    durationMs: duration(flow.createdAt, flow.finishedAt),
    outcome: flow.state === "running" ? TraceOutcome.running : flow.state === "completed" ? TraceOutcome.completed : flow.state === "cancelled" ? TraceOutcome.cancelled : TraceOutcome.failed,
    parentId: null,
    requestId,
    queue,
  };
}

/** The events behind the subscriber jobs and the event rows of the outbox, once each. */
function eventEntries(service: string, infos: JobInfo[], rows: RequestOutboxRow[]): TraceEntry[] {
  const events = new Map<string, TraceEntry>();
  for (const info of infos) {
    const event = eventOf(info);
    if (!event || events.has(event.id)) continue;
    events.set(event.id, pointEntry(service, TraceKind.event, event.id, event.type, event.occurredAt, info.job.requestId));
  }
  for (const row of rows) {
    if (row.kind !== "event" || !row.bodyId || events.has(row.bodyId)) continue;
    events.set(row.bodyId, pointEntry(service, TraceKind.event, row.bodyId, row.eventType ?? "event", row.createdAt, null));
  }
  return [...events.values()];
}

function pointEntry(service: string, kind: TraceKind, id: string, name: string, at: string, requestId: string | null): TraceEntry {
  return { kind, id, service, name, startedAt: at, finishedAt: at, durationMs: 0, outcome: TraceOutcome.published, parentId: null, requestId };
}

function outboxEntry(service: string, row: RequestOutboxRow, requestId: string | null): TraceEntry {
  const finishedAt = row.deliveredAt ?? row.diedAt;
  return {
    kind: row.kind === "event" ? TraceKind.kafka : TraceKind.outbox,
    id: row.id,
    service,
    name: row.kind === "event" ? `${row.eventType ?? "event"} → ${row.destination}` : `${row.kind} → ${row.destination}`,
    startedAt: row.createdAt,
    finishedAt,
    durationMs: duration(row.createdAt, finishedAt),
    outcome: row.state === "pending" ? TraceOutcome.pending : row.state === "delivered" ? TraceOutcome.delivered : TraceOutcome.dead,
    parentId: row.kind === "event" ? row.bodyId : null,
    requestId,
  };
}
