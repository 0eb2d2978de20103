import type { SqlExecutor } from "../sql-port.js";

/**
 * The worker registry (docs/worker.md#the-worker-registry): each worker process writes what it is and which jobs it
 * runs to the backend it consumes, on a timer of its own, never with a job's writes. A worker whose heartbeats
 * stop (killed, its host gone) is shown as `gone` once it missed GONE_AFTER_BEATS of them, and forgotten
 * `forgetAfterMs` after its last one; a worker that shuts down cleanly removes itself.
 */
export interface WorkerRecord {
  /** The worker's id: the `lockedBy` of the jobs it runs (`<host>:<pid>:<random>` unless given). */
  id: string;
  host: string;
  pid: number;
  /** The @jfast/runtime version it runs. */
  version: string;
  /** The named queue this record speaks of ("default" unless `[queues.<name>]`); a process running several writes one each. */
  queue: string;
  /** Its slots on that queue. */
  concurrency: number;
  startedAt: string;
  heartbeatAt: string;
  /** Ids of the jobs it runs now (started, not buffered), as of its last heartbeat. */
  running: string[];
  /** When each of them started on it (ISO, the worker's clock), in the same order. */
  runningSince: string[];
  /** How often it writes this record. */
  heartbeatMs: number;
  /** How long after its last heartbeat a reader forgets it. */
  forgetAfterMs: number;
}

/** Where a backend keeps its workers' records: the service's database, Redis keys, or this process's memory. */
export interface WorkerStore {
  readonly kind: "sql" | "redis" | "memory";
  /** Writes the record (a first one registers the worker); drops records forgotten by now on the way. */
  beat(record: WorkerRecord): Promise<void>;
  /** A clean shutdown: the record goes at once. */
  remove(params: { id: string }): Promise<void>;
  /** Every record not forgotten yet, in no particular order. */
  list(): Promise<WorkerRecord[]>;
}

export const WorkerState = { online: "online", gone: "gone" } as const;
export type WorkerState = (typeof WorkerState)[keyof typeof WorkerState];

/** Heartbeats a worker may miss before it is shown as gone. */
export const GONE_AFTER_BEATS = 3;
/** The default heartbeat of a worker's record. */
export const WORKER_HEARTBEAT_MS = 10_000;
/** The default time a gone worker stays listed after its last heartbeat. */
export const WORKER_FORGET_AFTER_MS = 10 * 60_000;

/** Why a RabbitMQ queue without the service's database keeps no registry, and the fix. */
export const WORKERS_REFUSAL = {
  reason: "a RabbitMQ queue keeps no worker registry without the database plugin: a broker holds messages, not records to read back",
  hint: 'enable the "database" plugin: the workers then register in jfast_workers',
} as const;

/** Online while its last heartbeat is at most GONE_AFTER_BEATS heartbeats old, as this reader's clock tells. */
export function workerState(record: Pick<WorkerRecord, "heartbeatAt" | "heartbeatMs">, now: number = Date.now()): WorkerState {
  return now - Date.parse(record.heartbeatAt) > GONE_AFTER_BEATS * record.heartbeatMs ? WorkerState.gone : WorkerState.online;
}

/** Past the time it is kept after its last heartbeat. */
export function isForgotten(record: Pick<WorkerRecord, "heartbeatAt" | "forgetAfterMs">, now: number = Date.now()): boolean {
  return now - Date.parse(record.heartbeatAt) > record.forgetAfterMs;
}

/** The statements of a SQL worker store: the PostgreSQL queue's sql/ files (upsert-worker, remove-worker, list-workers). */
export interface WorkerStatements {
  upsert: string;
  remove: string;
  list: string;
}

/**
 * jfast_workers (migration 0028) of `queue`: the PostgreSQL queue's own store and RabbitMQ's in the service's
 * database run these same statements (queue/worker-stores.ts reads the PostgreSQL queue's files).
 */
export function createSqlWorkerStore(params: { db: SqlExecutor; queue: string; sql: WorkerStatements }): WorkerStore {
  const { db, queue, sql } = params;
  return {
    kind: "sql",
    async beat(record) {
      await db.query(sql.upsert, [queue, ...workerRowParams(record)]);
    },
    async remove({ id }) {
      await db.query(sql.remove, [queue, id]);
    },
    async list() {
      const rows = await db.query<WorkerTableRow>(sql.list, [queue, new Date().toISOString()]);
      return rows.map(workerOfRow);
    },
  };
}

/** A jfast_workers row (migration 0028). */
interface WorkerTableRow {
  id: string;
  host: string;
  pid: number | string;
  version: string;
  named_queue: string;
  concurrency: number | string;
  started_at: Date | string;
  heartbeat_at: Date | string;
  running: string[] | null;
  heartbeat_ms: number | string;
  forget_after_ms: number | string;
}

function workerOfRow(row: WorkerTableRow): WorkerRecord {
  return {
    id: row.id,
    host: row.host,
    pid: Number(row.pid),
    version: row.version,
    queue: row.named_queue,
    concurrency: Number(row.concurrency),
    startedAt: new Date(row.started_at).toISOString(),
    heartbeatAt: new Date(row.heartbeat_at).toISOString(),
    ...runningOfColumn(row.running ?? []),
    heartbeatMs: Number(row.heartbeat_ms),
    forgetAfterMs: Number(row.forget_after_ms),
  };
}

/** jfast_workers.running holds "<start ms> <job id>" per job: the start first, since a job id may hold a space. */
function runningColumn(record: WorkerRecord): string[] {
  return record.running.map((id, i) => `${Date.parse(record.runningSince[i] ?? "") || 0} ${id}`);
}

function runningOfColumn(column: readonly string[]): Pick<WorkerRecord, "running" | "runningSince"> {
  const running: string[] = [];
  const runningSince: string[] = [];
  for (const entry of column) {
    const space = entry.indexOf(" ");
    running.push(entry.slice(space + 1));
    runningSince.push(new Date(Number(entry.slice(0, space))).toISOString());
  }
  return { running, runningSince };
}

/** The parameters of upsert-worker.sql after the queue ($1). */
function workerRowParams(record: WorkerRecord): unknown[] {
  return [
    record.id,
    record.host,
    record.pid,
    record.version,
    record.queue,
    record.concurrency,
    record.startedAt,
    record.heartbeatAt,
    runningColumn(record),
    record.heartbeatMs,
    record.forgetAfterMs,
  ];
}

/** The memory queue's registry: the workers of this process only, as the memory queue is this process's. */
export function createMemoryWorkerStore(): WorkerStore {
  const records = new Map<string, WorkerRecord>();
  const forget = () => {
    const now = Date.now();
    for (const [id, record] of records) if (isForgotten(record, now)) records.delete(id);
  };
  return {
    kind: "memory",
    async beat(record) {
      forget();
      records.set(record.id, { ...record, running: [...record.running], runningSince: [...record.runningSince] });
    },
    async remove({ id }) {
      records.delete(id);
    },
    async list() {
      forget();
      return [...records.values()].map((record) => ({ ...record, running: [...record.running], runningSince: [...record.runningSince] }));
    },
  };
}
