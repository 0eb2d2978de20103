import { GONE_AFTER_BEATS, workerState, WorkerState, WORKERS_REFUSAL, type WorkerRecord } from "../core/backend/workers.js";
import type { QueueBackend } from "../core/queue-backend.js";
import { namedQueues } from "./operations/flows.js";
import { backendCall } from "./queue-access.js";
import type { AdminSources } from "./sources.js";

/** Running jobs read for their task, progress and start per call at most; the others are listed by id only. */
const JOB_READS = 100;

/** A job a worker runs now, as workers.list shows it (docs/admin-api.md#workers). */
export interface RunningJobView {
  id: string;
  /** The named queue it runs on. */
  queue: string;
  /** Null where the job could not be read (gone meanwhile, or beyond this call's reads). */
  task: string | null;
  tenantId: string | null;
  /** When its current attempt started on the worker (the worker's clock). */
  startedAt: string | null;
  /** `tools.progress`'s last value (redacted as payloads are); absent when it reported none. */
  progress?: unknown;
}

/** One worker process (docs/worker.md#the-worker-registry): its records of every named queue it runs, as one. */
export interface WorkerView {
  /** The `lockedBy` of the jobs it runs. */
  id: string;
  host: string;
  pid: number;
  version: string;
  /** online, or gone: it missed GONE_AFTER_BEATS heartbeats (killed, its host lost) and is listed until forgotten. */
  state: WorkerState;
  queues: string[];
  /** Its slots on every queue it runs, added up. */
  concurrency: number;
  startedAt: string;
  heartbeatAt: string;
  heartbeatSeconds: number;
  /** When it will no longer be listed, unless it heartbeats again. */
  forgetAt: string;
  /** Ids of the jobs it runs, as of its last heartbeat. */
  running: string[];
  /** The same jobs with what could be read of them (`jobs: false` in the input: empty). */
  jobs: RunningJobView[];
}

export interface WorkersView {
  enabled: boolean;
  /** False when the service's queue keeps no registry (RabbitMQ without the database); `reason` says why. */
  supported: boolean;
  reason: string | null;
  /** Where the records live. */
  store: "sql" | "redis" | "memory" | null;
  /** Online first, then gone; each by start, oldest first. */
  workers: WorkerView[];
  online: number;
  gone: number;
  /** Heartbeats a worker may miss before it is shown gone. */
  goneAfterBeats: number;
}

/** workers.list and `jfast workers`: every registered worker of the service, with what it runs. */
export async function listWorkersView(sources: AdminSources, input: { jobs?: boolean | undefined } = {}): Promise<WorkersView> {
  const empty = { workers: [], online: 0, gone: 0, goneAfterBeats: GONE_AFTER_BEATS };
  const queue = sources.queue();
  if (!queue) return { enabled: false, supported: false, reason: null, store: null, ...empty };
  const queues = namedQueues(queue).filter((q) => q.backend.capabilities.workers);
  if (queues.length === 0) {
    return { enabled: true, supported: false, reason: WORKERS_REFUSAL.reason, store: null, ...empty };
  }
  const stores = queues.map((q) => ({ ...q, store: q.backend.workerStore() }));
  const lists = await Promise.all(stores.map((q) => backendCall(queue, "reading the worker registry", () => q.store.list())));
  const now = Date.now();
  const byId = new Map<string, WorkerView>();
  lists.forEach((records, i) => {
    for (const record of records) merge(byId, record, stores[i]!.name, now);
  });
  const workers = [...byId.values()].sort((a, b) => Number(a.state === WorkerState.gone) - Number(b.state === WorkerState.gone) || a.startedAt.localeCompare(b.startedAt) || a.id.localeCompare(b.id));
  if (input.jobs !== false) await fillJobs(sources, workers, new Map(queues.map((q) => [q.name, q.backend])));
  const online = workers.filter((w) => w.state === WorkerState.online).length;
  return { enabled: true, supported: true, reason: null, store: stores[0]!.store.kind, workers, online, gone: workers.length - online, goneAfterBeats: GONE_AFTER_BEATS };
}

/** A process running several named queues wrote a record to each: one worker, its queues, slots and jobs added up. */
function merge(byId: Map<string, WorkerView>, record: WorkerRecord, queueName: string, now: number): void {
  const state = workerState(record, now);
  const forgetAt = new Date(Date.parse(record.heartbeatAt) + record.forgetAfterMs).toISOString();
  const jobs = record.running.map((id, i) => ({ id, queue: queueName, task: null, tenantId: null, startedAt: record.runningSince[i] ?? null }));
  const seen = byId.get(record.id);
  if (!seen) {
    byId.set(record.id, {
      id: record.id,
      host: record.host,
      pid: record.pid,
      version: record.version,
      state,
      queues: [queueName],
      concurrency: record.concurrency,
      startedAt: record.startedAt,
      heartbeatAt: record.heartbeatAt,
      heartbeatSeconds: record.heartbeatMs / 1000,
      forgetAt,
      running: [...record.running],
      jobs,
    });
    return;
  }
  seen.queues.push(queueName);
  seen.concurrency += record.concurrency;
  if (record.startedAt < seen.startedAt) seen.startedAt = record.startedAt;
  if (record.heartbeatAt > seen.heartbeatAt) seen.heartbeatAt = record.heartbeatAt;
  if (forgetAt > seen.forgetAt) seen.forgetAt = forgetAt;
  if (state === WorkerState.online) seen.state = WorkerState.online;
  seen.running.push(...record.running);
  seen.jobs.push(...jobs);
}

/** Reads up to JOB_READS running jobs, in parallel, for their task, tenant and progress. */
async function fillJobs(sources: AdminSources, workers: WorkerView[], backends: ReadonlyMap<string, QueueBackend>): Promise<void> {
  const wanted = workers.flatMap((w) => w.jobs).slice(0, JOB_READS);
  await Promise.all(
    wanted.map(async (view) => {
      const backend = backends.get(view.queue);
      const info = await backend?.getJob({ id: view.id }).catch(() => null);
      if (!info) return;
      const job = sources.redaction.job(info.job);
      view.task = job.task;
      view.tenantId = job.tenantId;
      if (info.progress !== undefined) view.progress = sources.redaction.payload(info.progress);
    }),
  );
}
