import type { Event } from "../core/event.js";
import { flowPlanToJSON, type BatchCreated, type BatchOptions, type FlowCreated, type FlowInput } from "../core/flow.js";
import type { Job } from "../core/job.js";
import { batchCreated, flowCreated, planBatch, planFlow, planForQueue } from "../queue/flows.js";
import type { EnqueueResult, QueueEnqueueResult, RetryDeadParams } from "../core/queue-backend.js";
import type { SqlExecutor } from "../core/sql-port.js";
import type { TaskRegistry } from "../core/registry.js";
import type { JfastConfig } from "../config/load-config.js";
import type { DatabaseProvider } from "../database/database-provider.js";
import { publishLocal, type OutboxEventBus, type PublishResult } from "../local-events/publish-local.js";
import { NotSupportedError } from "../errors/jfast-error.js";
import type { Logger } from "../observability/logger.js";
import { groupByQueue, perJob, type QueueProvider } from "../queue/queue-provider.js";
import { outboxChannel } from "./channel.js";
import { SQL } from "./load-sql.js";
import { outboxHealth, type OutboxHealth } from "./outbox-health.js";
import { deadRow, eventRow, OutboxKind, outboxRowId, requestRow, writeOutboxRows, type DeadOutboxRow, type EventOutboxRow, type RequestOutboxRow } from "./outbox-rows.js";
import type { RelayStatus } from "./relay.js";
import type { JobEncryption } from "../encryption/job-encryption.js";

/**
 * Writes prepared jobs in the caller's transaction, each into its task's named queue (docs/queues.md), for a
 * queue whose backend can (`capabilities.transactionalEnqueue`: the PostgreSQL queue in the same database). One statement at a time:
 * one transaction, one connection.
 */
export async function enqueueWithinQueues(queue: QueueProvider, executor: SqlExecutor, jobs: Job[]): Promise<EnqueueResult> {
  if (queue.queues.size === 1 && queue.backend.capabilities.transactionalEnqueue) return queue.backend.enqueueWithin({ executor, jobs });
  const inserted: string[] = [];
  const duplicates = new Map<string, string>();
  for (const [named, group] of groupByQueue(jobs, queue.queueOf)) {
    // Every named queue is a backend of the same kind as the default one (plugins/queue.ts).
    if (!named.backend.capabilities.transactionalEnqueue) continue;
    const result = await named.backend.enqueueWithin({ executor, jobs: group });
    inserted.push(...result.inserted);
    for (const [id, holder] of result.duplicates ?? []) duplicates.set(id, holder);
  }
  return duplicates.size ? { inserted, duplicates } : { inserted };
}

/** `jfast.require("outbox")`: writes that exist iff the caller's transaction commits. */
export interface Outbox {
  /**
   * Ids of the jobs written now; an id already written (pending, or relayed within `[plugin.outbox]
   * retention`; on the PostgreSQL queue, any job still in the table) is left out and not written again. A unique
   * job is deduplicated in the caller's transaction on the PostgreSQL queue, else when the relay enqueues it
   * (it is reported written here, not a duplicate: docs/tasks.md#unique-jobs).
   */
  enqueue(session: unknown, job: Job | Job[]): Promise<QueueEnqueueResult>;
  /**
   * Starts a flow (docs/flows.md) that exists iff the caller's transaction commits: written in it on the
   * PostgreSQL queue of the same database, else as one outbox row the relay hands to the queue after commit.
   * Checked first (FLOW_INVALID, nothing written).
   */
  flow(session: unknown, input: FlowInput): Promise<FlowCreated>;
  /** A batch (docs/flows.md#batches) in the caller's transaction, as `flow`. */
  batch(session: unknown, jobs: Job[], options?: BatchOptions): Promise<BatchCreated>;
  /** One job per local subscriber of the event's type (and the bus, when on), in the caller's transaction. */
  publish(session: unknown, topic: string, event: Event): Promise<PublishResult>;
  health(): Promise<OutboxHealth>;
  /** Rows the relay set aside as dead, newest death first, with every recorded error. */
  listDead(params: { limit: number; offset?: number }): Promise<DeadOutboxRow[]>;
  /** A request's rows, oldest first (docs/admin-api.md#timeline), through an index of the request id in the body. */
  rowsByRequest(params: { requestId: string; limit: number }): Promise<RequestOutboxRow[]>;
  /** Event rows of one type written in [from, to) within a request, oldest first (docs/alerts.md#promises). */
  eventsByType(params: { type: string; from: Date; to: Date; limit: number }): Promise<EventOutboxRow[]>;
  /** Puts dead rows back for the relay with attempts reset. Ids that are not dead rows come back in `missing`. */
  retryDead(params: RetryDeadParams): Promise<{ retried: string[]; missing: string[] }>;
  /** Deletes dead rows for good. */
  discardDead(params: RetryDeadParams): Promise<{ discarded: string[]; missing: string[] }>;
}

export function createOutbox(params: {
  database: DatabaseProvider;
  queue: QueueProvider | null;
  config: JfastConfig;
  logger: Logger;
  registry: TaskRegistry;
  /** The kafka plugin, when on: the event also goes to its topic for other services. */
  bus?: () => OutboxEventBus | null;
  /** The relay of this process, once started (its state joins the health check). */
  relay?: () => { status(): RelayStatus } | null;
  /** Seals the rows of encrypted tasks before they are written (docs/security.md#encryption-at-rest). */
  encryption?: JobEncryption | null;
  /** The outbox as provided (traced when telemetry is on): publish enqueues subscriber jobs through it. */
  provided?: () => Outbox;
}): Outbox {
  const { database, queue } = params;
  const channel = outboxChannel(database.schema);
  const maxAttempts = params.config.outbox?.maxAttempts ?? 10;
  const needQueue = (what: string): QueueProvider => {
    if (queue) return queue;
    throw new NotSupportedError(`outbox.${what} needs the queue plugin`, {
      hint: `add "queue" to [plugins] enabled in jfast.toml`,
      docs: "jfast docs outbox",
    });
  };
  /** A planned flow into the caller's transaction: the flow itself on a queue of this database, else an outbox row. */
  const writeFlow = async (session: unknown, queue: QueueProvider, planned: ReturnType<typeof planForQueue>): Promise<void> => {
    const executor = database.executorFor(session);
    const { plan, queue: named } = planned;
    if (named.backend.capabilities.transactionalEnqueue) {
      await named.backend.enqueueFlowWithin({ executor, flow: plan });
      return;
    }
    const stored = params.encryption ? (job: Job) => params.encryption!.storedJSON(job) : undefined;
    await writeOutboxRows({
      executor,
      rows: [{ kind: OutboxKind.flow, destination: queue.name, id: plan.id, body: flowPlanToJSON(plan, stored) }],
      maxAttempts,
      channel,
    });
  };
  const outbox: Outbox = {
    async flow(session, input) {
      const q = needQueue("flow");
      const planned = planForQueue(() => planFlow(input), q.prepare, q.queueOf);
      await q.checkPayloads(planned.plan.steps.map((s) => s.job));
      await writeFlow(session, q, planned);
      return flowCreated(planned.plan);
    },
    async batch(session, jobs, options) {
      const q = needQueue("batch");
      const planned = planForQueue(() => planBatch(jobs, options), q.prepare, q.queueOf);
      await q.checkPayloads(planned.plan.steps.map((s) => s.job));
      await writeFlow(session, q, planned);
      return batchCreated(planned.plan, jobs);
    },
    async enqueue(session, job) {
      const queue = needQueue("enqueue");
      const jobs = (Array.isArray(job) ? job : [job]).map(queue.prepare);
      const checking = queue.checkPayloads(jobs);
      if (checking) await checking;
      const executor = database.executorFor(session);
      if (queue.backend.capabilities.transactionalEnqueue) {
        // Same database: the job row itself is written in the caller's transaction (sealed by the backend's
        // encryption seam, encryption/encrypting-backend.ts).
        return perJob(await enqueueWithinQueues(queue, executor, jobs), jobs);
      }
      // Another backend: a jfast_outbox row in the caller's transaction, moved by the relay after commit.
      const inserted = await writeOutboxRows({
        executor,
        rows: jobs.map((j) => ({ kind: OutboxKind.job, destination: queue.name, id: j.id, body: params.encryption?.storedJSON(j) ?? j.toJSON() })),
        maxAttempts,
        channel,
      });
      const ids = [...new Set(jobs.map((j) => j.id))];
      return perJob({ inserted: ids.filter((id) => inserted.has(outboxRowId(OutboxKind.job, queue.name, id))) }, jobs);
    },
    publish(session, topic, event) {
      return publishLocal({
        service: params.config.service.name,
        definitions: params.registry.all(),
        bus: params.bus?.() ?? null,
        // Same path as outbox.enqueue: straight into jfast_jobs on the PostgreSQL queue, the relay otherwise.
        enqueue: (s, jobs) => (params.provided?.() ?? outbox).enqueue(s, jobs),
        executor: (s) => database.executorFor(s),
        session,
        topic,
        event,
      });
    },
    health() {
      return outboxHealth(database.reader, params.relay?.()?.status() ?? null);
    },
    async listDead({ limit, offset = 0 }) {
      const rows = await database.sql.query<Parameters<typeof deadRow>[0]>(SQL.listDead, [limit, offset]);
      return rows.map(deadRow);
    },
    async rowsByRequest({ requestId, limit }) {
      const rows = await database.reader.query<Parameters<typeof requestRow>[0]>(SQL.rowsByRequest, [requestId, limit]);
      return rows.map(requestRow);
    },
    async eventsByType({ type, from, to, limit }) {
      const rows = await database.reader.query<Parameters<typeof eventRow>[0]>(SQL.eventsByType, [type, from.toISOString(), to.toISOString(), limit]);
      return rows.map(eventRow);
    },
    async retryDead(selection) {
      const ids = "ids" in selection ? [...new Set(selection.ids)] : null;
      const rows = await database.sql.query<{ id: string }>(SQL.retryDead, [ids, channel]);
      const retried = new Set(rows.map((r) => r.id));
      return { retried: ids ? ids.filter((id) => retried.has(id)) : [...retried], missing: ids ? ids.filter((id) => !retried.has(id)) : [] };
    },
    async discardDead(selection) {
      const ids = "ids" in selection ? [...new Set(selection.ids)] : null;
      const rows = await database.sql.query<{ id: string }>(SQL.discardDead, [ids]);
      const discarded = new Set(rows.map((r) => r.id));
      return { discarded: ids ? ids.filter((id) => discarded.has(id)) : [...discarded], missing: ids ? ids.filter((id) => !discarded.has(id)) : [] };
    },
  };
  return outbox;
}
