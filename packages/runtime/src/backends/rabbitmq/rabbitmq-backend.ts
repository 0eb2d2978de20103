import type { AttemptError, Job } from "../../core/job.js";
import type { LeaseExtenderSpec } from "../../core/lease-extender.js";
import type { LimitMap, LimitUsage } from "../../core/limits.js";
import type { PauseStore } from "../../core/pause.js";
import {
  BackendKind,
  notSupported,
  type BackendCapabilities,
  type CancelResult,
  type ClaimParams,
  type CompleteParams,
  type DeadJob,
  type Depths,
  type EnqueueResult,
  type JobActionResult,
  type JobUpdate,
  type JobInfo,
  type JobListing,
  type RequestJob,
  type LeaseReport,
  type ListJobsParams,
  type QueueBackend,
  type RetryDeadParams,
  type SnoozeParams,
  type TaskDepths,
} from "../../core/queue-backend.js";
import type { PruneParams } from "../../core/retention.js";
import type { StoredParts, StoredRewriteResult } from "../../core/stored-rewrite.js";
import type { BlockedKey } from "../../core/backend/admin.js";
import type { ThroughputStore } from "../../core/throughput.js";
import { ConfigError } from "../../errors/jfast-error.js";
import * as admin from "./admin.js";
import { rabbitmqCapabilities } from "./capabilities.js";
import { BrokerConnection, nodeUrls } from "./connection.js";
import { Consumer } from "./consumer.js";
import type { RabbitQueue } from "./context.js";
import { DeadLetters } from "./dead-letters.js";
import { assertCascadeShape, DEFAULT_CASCADE, type CascadeShape } from "./delay-key.js";
import { enqueue } from "./enqueue.js";
import { DOCS } from "./errors.js";
import * as maintenance from "./maintenance.js";
import { queueNames, type QueueNames } from "./names.js";
import type { RabbitMqBackendOptions } from "./options.js";
import * as outcomes from "./outcomes.js";
import * as deadlines from "./deadlines.js";
import { setProgress } from "./progress.js";
import type { JobProgress } from "../../core/job-life.js";
import { putBack } from "./publications.js";
import { RecentIds } from "./recent-ids.js";
import { repair } from "./repair.js";
import { declareTopology, QueueType } from "./topology.js";
import { flowsNotSupported, type FlowDetail, type FlowSummary, type ListFlowsParams } from "../../core/backend/flows.js";
import type { FlowPlan, ParentOutcome } from "../../core/flow.js";
import { FLOW_STORE_MISSING } from "../../core/flow-store.js";
import type { SqlExecutor } from "../../core/sql-port.js";
import { enqueueFlow, sweep } from "./flows.js";
import { WORKERS_REFUSAL, type WorkerStore } from "../../core/backend/workers.js";

export type { RabbitMqBackendOptions } from "./options.js";

/** Channels used side by side to declare the topology and to read the 27 queue counts. */
const TOPOLOGY_CHANNELS = 8;

/**
 * QueueBackend on RabbitMQ (amqplib). How each part of the protocol maps onto the broker:
 *  - enqueue: a persistent publish with publisher confirms, to the work queue, or into the delay cascade
 *    (topology.ts, delay-key.ts) when the job is due later. Resolves once the broker has it.
 *  - claim: the consumer's pushed deliveries (consumer.ts); attempts = published attempts + 1.
 *  - lease: the unacked delivery. Connection or channel loss → the broker redelivers → the receiver records
 *    "worker lost" (arrival.ts). Inside a live process an unextended lease is nacked back the same way.
 *  - complete: ack. retry: publish the next attempt through the cascade, then ack. kill: publish to the dead
 *    queue, then ack. release: publish the same message again (attempts as before the claim), then ack.
 *    Publishing first means a crash in between leaves a duplicate, never a loss.
 *  - dead letters: `<queue>.dead`, browsed (dead-letters.ts).
 *  - flows: kept in the service's database (FlowStore); a step is published once it is ready (flows.ts).
 */
export class RabbitMqBackend implements QueueBackend {
  readonly kind = BackendKind.rabbitmq;
  readonly capabilities: BackendCapabilities;
  readonly names: QueueNames;
  readonly shape: CascadeShape;
  readonly queueType: QueueType;
  private readonly options: RabbitMqBackendOptions;
  private readonly connection: BrokerConnection;
  private readonly consumer: Consumer;
  /** What the operations work on (context.ts). */
  private readonly q: RabbitQueue;
  private declared = false;
  private closing: Promise<void> | null = null;
  /** Where the next read of cancelled ids starts. */
  private cancelCursor: string | null = null;
  private cancelTimer: NodeJS.Timeout | null = null;
  private sweepTimer: NodeJS.Timeout | null = null;
  /** Without a flow store (no database), every flow member refuses (docs/rabbitmq.md#flows). */
  private readonly noFlows = flowsNotSupported(FLOW_STORE_MISSING.reason, FLOW_STORE_MISSING.hint);

  constructor(options: RabbitMqBackendOptions) {
    this.options = options;
    this.shape = { unitMs: options.delay?.unitMs ?? DEFAULT_CASCADE.unitMs, levels: options.delay?.levels ?? DEFAULT_CASCADE.levels };
    try {
      assertCascadeShape(this.shape);
      this.names = queueNames(options.queue, this.shape.levels);
    } catch (error) {
      throw new ConfigError(`the RabbitMQ queue "${options.queue}" cannot be built: ${(error as Error).message}`, {
        code: "RABBITMQ_OPTIONS_INVALID",
        hint: "use a shorter [plugin.queue] name, or a delay cascade RabbitMQ accepts (unit ≥ 1 ms, top-level TTL ≤ 2^32 - 1 ms)",
        docs: DOCS,
      });
    }
    this.queueType = options.queueType ?? QueueType.classic;
    this.connection = new BrokerConnection({
      urls: nodeUrls(options.url).map((url) => withHeartbeat(url, options.heartbeatSeconds ?? 30)),
      queue: options.queue,
      connectTimeoutMs: options.connectTimeoutMs ?? 10_000,
      logger: options.logger,
      onSession: async (session) => {
        if (this.declared) {
          const channels = await Promise.all(Array.from({ length: TOPOLOGY_CHANNELS }, () => session.model.createChannel()));
          for (const channel of channels) channel.on("error", () => undefined);
          try {
            await declareTopology(channels, this.names, this.shape, this.queueType);
          } finally {
            await Promise.all(channels.map((channel) => channel.close().catch(() => undefined)));
          }
        }
        await this.consumer.onSession(session);
      },
      onLost: (session) => this.consumer.onLost(session),
    });
    this.consumer = new Consumer({
      connection: this.connection,
      names: this.names,
      logger: options.logger,
      repair: (arrival, message) => repair(this.q, arrival, message),
      neverCancel: this.queueType === QueueType.quorum,
      // cancelFlow fills the same set: a cancelled step's message is dropped too.
      isCancelled: options.cancellations || options.flows ? (id) => this.q.cancelledIds.has(id) : undefined,
    });
    this.capabilities = rabbitmqCapabilities({
      cancellations: options.cancellations !== undefined,
      uniqueKeys: options.uniqueKeys !== undefined,
      limits: options.limits !== undefined,
      flows: options.flows !== undefined,
      workers: options.workers !== undefined,
      quorum: this.queueType === QueueType.quorum,
    });
    this.q = {
      options,
      names: this.names,
      shape: this.shape,
      queueType: this.queueType,
      connection: this.connection,
      consumer: this.consumer,
      dead: new DeadLetters(this.connection, this.names),
      recent: new RecentIds(options.recentIds ?? 100_000),
      connectTimeoutMs: options.connectTimeoutMs ?? 10_000,
      cancelledIds: new Set(),
      limited: new Map(),
      prunerOwner: null,
    };
  }

  async setup(): Promise<void> {
    await this.connection.withChannels(TOPOLOGY_CHANNELS, "declare its queues and exchanges", (channels) =>
      declareTopology(channels, this.names, this.shape, this.queueType),
    );
    this.declared = true;
    if (this.options.cancellations && !this.cancelTimer) {
      await this.readCancellations();
      this.cancelTimer = setInterval(() => void this.readCancellations(), this.options.cancelReadMs ?? 1000);
      this.cancelTimer.unref();
    }
    const flows = this.options.flows;
    if (flows && !this.sweepTimer) {
      this.sweepTimer = setInterval(
        () => void sweep(this.q, flows).catch((error: unknown) => this.options.logger?.warn("could not sweep unpublished flow steps; trying again", { error: (error as Error).message })),
        this.options.flowSweepMs ?? 5000,
      );
      this.sweepTimer.unref();
    }
  }

  private async readCancellations(): Promise<void> {
    const store = this.options.cancellations!;
    try {
      for (;;) {
        const { ids, cursor } = await store.since({ after: this.cancelCursor, limit: 1000 });
        for (const id of ids) this.q.cancelledIds.add(id);
        this.cancelCursor = cursor;
        if (ids.length < 1000) return;
      }
    } catch (error) {
      this.options.logger?.warn("could not read cancelled jobs; trying again", { error: (error as Error).message });
    }
  }

  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    if (this.cancelTimer) clearInterval(this.cancelTimer);
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    const unclaimed = await this.consumer.close();
    if (unclaimed.length > 0) {
      // Pushed to us but never started: back to the queue as they were, so no attempt is charged. A nack
      // would make the broker flag them redelivered, which reads as a lost attempt.
      await putBack(this.q, unclaimed, { json: (d) => d.json }).catch((error: unknown) =>
        this.options.logger?.warn("could not return unclaimed jobs at close; they come back as lost attempts", { error: (error as Error).message }),
      );
    }
    await this.connection.close();
  }

  enqueue(params: { jobs: Job[] }): Promise<EnqueueResult> {
    return enqueue(this.q, params);
  }

  async enqueueWithin(): Promise<EnqueueResult> {
    throw notSupported("transactionalEnqueue", "the RabbitMQ queue cannot write jobs in a SQL transaction", {
      hint: "outbox.enqueue writes a jfast_outbox row in the transaction instead, moved by the relay after commit",
    });
  }

  /** Kept in the service's database (FlowStore), published step by step as each becomes ready (flows.ts). */
  enqueueFlow(params: { flow: FlowPlan }): Promise<{ created: boolean }> {
    const store = this.options.flows;
    return store ? enqueueFlow(this.q, store, params) : this.noFlows.enqueueFlow(params);
  }

  async enqueueFlowWithin(params: { executor: SqlExecutor; flow: FlowPlan }): Promise<{ created: boolean }> {
    if (!this.options.flows) return this.noFlows.enqueueFlowWithin(params);
    throw notSupported("transactionalEnqueue", "the RabbitMQ queue cannot write a flow in a SQL transaction", {
      hint: "outbox.flow writes the flow into the jfast_outbox table in the transaction instead, moved by the relay after commit",
    });
  }

  parentOutcomes(params: { jobIds: readonly string[] }): Promise<Map<string, ParentOutcome>> {
    return this.options.flows ? this.options.flows.parentOutcomes(params) : this.noFlows.parentOutcomes(params);
  }

  listFlows(params: ListFlowsParams): Promise<{ rows: FlowSummary[]; next: string | null }> {
    return this.options.flows ? this.options.flows.list(params) : this.noFlows.listFlows(params);
  }

  getFlow(params: { id: string }): Promise<FlowDetail | null> {
    return this.options.flows ? this.options.flows.get(params) : this.noFlows.getFlow(params);
  }

  /** Each unfinished step is recorded as a cancelled job too: its message is dropped, a running one's worker told. */
  async cancelFlow(params: { id: string }): Promise<{ cancelled: string[] } | null> {
    if (!this.options.flows) return this.noFlows.cancelFlow(params);
    const result = await this.options.flows.cancel(params);
    for (const id of result?.cancelled ?? []) this.q.cancelledIds.add(id);
    return result;
  }

  offerSlots(): () => void {
    throw notSupported("handOff", "the RabbitMQ queue hands no job over in process: every job goes through the broker, which pushes it to a consumer");
  }

  leaseExtender(): LeaseExtenderSpec {
    throw notSupported("leaseThread", "a RabbitMQ lease is a delivery on this process's channel; no other connection can extend it");
  }

  claim(params: ClaimParams): Promise<Job[]> {
    return outcomes.claim(this.q, params);
  }

  waitForWork(params: { signal: AbortSignal; timeoutMs: number }): Promise<void> {
    return this.consumer.wait(params);
  }

  extendLeases(params: { workerId: string; jobIds: string[]; leaseMs: number }): Promise<LeaseReport> {
    return outcomes.extendLeases(this.q, params);
  }

  complete(params: CompleteParams): Promise<void> {
    return outcomes.complete(this.q, params);
  }

  retry(params: { workerId: string; job: Job; error: AttemptError; availableAt: Date }): Promise<void> {
    return outcomes.retry(this.q, params);
  }

  kill(params: { workerId: string; job: Job; error: AttemptError }): Promise<void> {
    return outcomes.kill(this.q, params);
  }

  expire(params: { workerId: string; job: Job; error: AttemptError }): Promise<void> {
    return deadlines.expire(this.q, params);
  }

  /** A waiting message cannot be read inside the broker: a job past its deadline is ended when it is delivered. */
  async expireDue(): Promise<number> {
    return 0;
  }

  /** No per-key state: keyed tasks are refused on RabbitMQ (docs/flow-control.md#what-each-backend-enforces). */
  async pruneKeys(): Promise<number> {
    return 0;
  }

  async setProgress(params: { workerId: string; job: Job; progress: JobProgress }): Promise<void> {
    setProgress(this.q, params);
  }

  snooze(params: SnoozeParams): Promise<{ snoozed: boolean }> {
    return outcomes.snooze(this.q, params);
  }

  cancel(params: { id: string }): Promise<CancelResult> {
    return outcomes.cancel(this.q, params);
  }

  release(params: { workerId: string; jobs: Job[]; availableAt?: Date }): Promise<void> {
    return outcomes.release(this.q, params);
  }

  setLimits(params: { limits: LimitMap }): Promise<void> {
    return maintenance.setLimits(this.q, params);
  }

  limitUsage(params: { task: string }): Promise<LimitUsage> {
    return maintenance.limitUsage(this.q, params);
  }

  getJob(params: { id: string }): Promise<JobInfo | null> {
    return admin.getJob(this.q, params);
  }

  listJobs(params: ListJobsParams): Promise<JobListing> {
    return admin.listJobs(this.q, params);
  }

  depths(): Promise<Depths> {
    return admin.depths(this.q);
  }

  depthsByTask(): Promise<TaskDepths> {
    return admin.depthsByTask(this.q);
  }

  listDead(params: { limit: number; offset?: number }): Promise<DeadJob[]> {
    return admin.listDead(this.q, params);
  }

  /** The broker keeps no finished job and cannot read a waiting one: a timeline shows its dead letters only. */
  async jobsByRequest(): Promise<RequestJob[]> {
    throw notSupported("requestIndex", "the RabbitMQ queue keeps no finished job and cannot read a waiting message, so it cannot find a request's jobs", {
      hint: "a timeline reads its dead letters instead; the PostgreSQL queue finds a request's jobs through an index",
    });
  }

  searchDead(): Promise<{ rows: DeadJob[]; next: string | null }> {
    return admin.searchDead(this.q);
  }

  retryDead(params: RetryDeadParams): Promise<{ retried: string[]; missing: string[] }> {
    return admin.retryDead(this.q, params);
  }

  discardDead(params: RetryDeadParams): Promise<{ discarded: string[]; missing: string[] }> {
    return admin.discardDead(this.q, params);
  }

  runNow(params: { id: string }): Promise<JobActionResult> {
    return admin.runNow(this.q, params);
  }

  deleteJob(params: { id: string }): Promise<JobActionResult> {
    return admin.deleteJob(this.q, params);
  }

  updateJob(params: JobUpdate): Promise<JobActionResult> {
    return admin.updateJob(this.q, params);
  }

  rewriteStored(params: { rewrite(parts: StoredParts): StoredParts | null }): Promise<StoredRewriteResult> {
    return admin.rewriteStored(this.q, params);
  }

  blockedKeys(_params: { limit: number }): Promise<BlockedKey[]> {
    return Promise.reject(notSupported("orderPerKey", "this queue keeps no order per key (orderedBy), so no key can be blocked"));
  }

  skipBlockedKey(_params: { task: string; key: string }): Promise<{ skipped: string[] }> {
    return Promise.reject(notSupported("orderPerKey", "this queue keeps no order per key (orderedBy), so no key can be blocked"));
  }

  prune(params: PruneParams): Promise<number> {
    return maintenance.prune(this.q, params);
  }

  claimPruner(params: { owner: string; ttlMs: number }): Promise<boolean> {
    return maintenance.claimPruner(this.q, params);
  }

  releasePruner(params: { owner: string }): Promise<void> {
    return maintenance.releasePruner(this.q, params);
  }

  /**
   * None of its own: the service keeps paused tasks in its database (or refuses pausing without one). The
   * consumer cannot skip a task's messages, so the worker hands them back through the delay cascade.
   */
  pauseStore(): PauseStore {
    throw notSupported("pauseStore", "the RabbitMQ queue keeps no store of paused tasks; the service keeps them in its database");
  }

  /** The service keeps throughput counts in its database, or in memory. */
  throughputStore(): ThroughputStore {
    throw notSupported("throughputStore", "the RabbitMQ queue keeps no throughput counts; the service keeps them in its database or in memory");
  }

  /** Kept in the service's database (jfast_workers); without one, NOT_SUPPORTED: a broker has no place for it. */
  workerStore(): WorkerStore {
    if (this.options.workers) return this.options.workers;
    throw notSupported("workers", WORKERS_REFUSAL.reason, { hint: WORKERS_REFUSAL.hint });
  }
}

function withHeartbeat(url: string, seconds: number): string {
  if (/[?&]heartbeat=/.test(url)) return url;
  return `${url}${url.includes("?") ? "&" : "?"}heartbeat=${seconds}`;
}

export function createRabbitMqBackend(options: RabbitMqBackendOptions): RabbitMqBackend {
  return new RabbitMqBackend(options);
}
