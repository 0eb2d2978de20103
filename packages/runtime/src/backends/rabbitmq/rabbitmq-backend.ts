import type { ConsumeMessage } from "amqplib";
import { DEFAULT_PRIORITY, type AttemptError, type Job, type JobJSON } from "../../core/job.js";
import { JobState } from "../../core/job-state.js";
import {
  BackendKind,
  workerLostError,
  type CancelResult,
  type ClaimParams,
  type DeadJob,
  type Depths,
  type EnqueueResult,
  ListState,
  type JobActionResult,
  type JobInfo,
  type JobListing,
  type LeaseReport,
  type ListJobsParams,
  type QueueBackend,
  type RetryDeadParams,
  type SnoozeParams,
  type TaskDepths,
} from "../../core/queue-backend.js";
import type { CancelStore } from "../../core/cancel-store.js";
import { hasUnique } from "../../core/unique.js";
import { takeUniqueKeys, type UniqueStore } from "../../core/unique-store.js";
import type { LimitStore } from "../../core/limit-store.js";
import type { LimitMap, LimitUsage } from "../../core/limits.js";
import { ErrorCode } from "../../errors/codes.js";
import { ConfigError, JfastError, NotSupportedError } from "../../errors/jfast-error.js";
import type { Arrival } from "./arrival.js";
import { BrokerConnection, nodeUrls, type BackendLogger, type Publication } from "./connection.js";
import { Consumer, type Delivery } from "./consumer.js";
import type { StoredParts, StoredRewriteResult } from "../../core/stored-rewrite.js";
import { DeadLetters } from "./dead-letters.js";
import { RetainedState, type PruneParams } from "../../core/retention.js";

/** Why each state but dead cannot be listed (listJobs). */
const UNLISTABLE: Record<Exclude<ListState, "dead">, string> = {
  ready: "a waiting message cannot be read without taking it out of its queue (the broker reports only how many there are)",
  scheduled: "a delayed message waits in the delay queues, which cannot be read without taking their messages out",
  running: "the broker does not report which messages other consumers hold; each process knows only its own",
  completed: "an acknowledged message is gone; the broker keeps no record of completed jobs",
  cancelled: "a cancellation is recorded by id only, and its message is dropped when it is delivered",
};
import { assertCascadeShape, DEFAULT_CASCADE, planDelay, type CascadeShape } from "./delay-key.js";
import { DOCS } from "./errors.js";
import { encodeJob, numberHeader, unreadableJob } from "./message.js";
import { Header, queueNames, type QueueNames } from "./names.js";
import { RecentIds } from "./recent-ids.js";
import { declareTopology, QueueType } from "./topology.js";

export interface RabbitMqBackendOptions {
  /**
   * amqp://user:password@host:5672/vhost (amqps:// for TLS). Several, separated by commas, are nodes of one
   * cluster: the connection uses the first that answers and moves to the next when its node goes away.
   */
  url: string;
  /**
   * The broker queue type of the work queue, the delay cascade and the dead queue; default classic. Quorum
   * queues are replicated over the cluster's nodes (docs/rabbitmq.md#queue-types). Part of the broker topology:
   * a queue declared as one type refuses the other (RABBITMQ_TOPOLOGY_MISMATCH).
   */
  queueType?: QueueType;
  /** The work queue's name; every other name derives from it (see names.ts). */
  queue: string;
  /**
   * The delay cascade's unit and level count (default 100 ms × 25 levels ≈ 38 days). They are broker
   * topology: a queue declared with one shape refuses another, so changing them needs another queue name.
   */
  delay?: Partial<CascadeShape>;
  /** How long an operation waits for the broker (e.g. during a restart) before failing; default 10 s. */
  connectTimeoutMs?: number;
  /**
   * AMQP heartbeat in seconds, unless the URL sets `heartbeat=`; default 30. The broker requeues a silent
   * connection's deliveries after about two heartbeats: how fast a vanished host's jobs come back.
   */
  heartbeatSeconds?: number;
  /** How many recently enqueued ids this process remembers to keep a repeated enqueue a no-op; default 100 000. */
  recentIds?: number;
  /**
   * Where cancellations are recorded (the service's database): without one, cancel answers NOT_SUPPORTED. Read
   * every `cancelReadMs` (default 1 s); a cancelled job's message is dropped when delivered.
   */
  cancellations?: CancelStore;
  cancelReadMs?: number;
  /** Where unique keys are held (the service's database): without one, a unique job is refused (NOT_SUPPORTED). */
  uniqueKeys?: UniqueStore;
  /** Where task limits are counted (the service's database): without one, a limited task is refused (NOT_SUPPORTED). */
  limits?: LimitStore;
  logger?: BackendLogger;
}

/** Channels used side by side to declare the topology and to read the 27 queue counts. */
const TOPOLOGY_CHANNELS = 8;
const DEPTH_CHANNELS = 4;

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
 */
export class RabbitMqBackend implements QueueBackend {
  readonly kind = BackendKind.rabbitmq;
  readonly pushesAhead = true;
  readonly names: QueueNames;
  readonly shape: CascadeShape;
  readonly queueType: QueueType;
  private readonly options: RabbitMqBackendOptions;
  private readonly connection: BrokerConnection;
  private readonly consumer: Consumer;
  private readonly dead: DeadLetters;
  private readonly recent: RecentIds;
  private readonly connectTimeoutMs: number;
  private declared = false;
  private closing: Promise<void> | null = null;
  /** Cancelled ids read from `options.cancellations`, and where the next read starts. */
  private readonly cancelledIds = new Set<string>();
  private cancelCursor: string | null = null;
  private cancelTimer: NodeJS.Timeout | null = null;
  /** The pruner of this process holding the broker-side lease (the exclusive `<queue>.pruner` queue). */
  private prunerOwner: string | null = null;

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
    this.connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
    this.queueType = options.queueType ?? QueueType.classic;
    this.connection = new BrokerConnection({
      urls: nodeUrls(options.url).map((url) => withHeartbeat(url, options.heartbeatSeconds ?? 30)),
      queue: options.queue,
      connectTimeoutMs: this.connectTimeoutMs,
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
      repair: (arrival, message) => this.repair(arrival, message),
      neverCancel: this.queueType === QueueType.quorum,
      isCancelled: options.cancellations ? (id) => this.cancelledIds.has(id) : undefined,
    });
    this.dead = new DeadLetters(this.connection, this.names);
    this.recent = new RecentIds(options.recentIds ?? 100_000);
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
  }

  private async readCancellations(): Promise<void> {
    const store = this.options.cancellations!;
    try {
      for (;;) {
        const { ids, cursor } = await store.since({ after: this.cancelCursor, limit: 1000 });
        for (const id of ids) this.cancelledIds.add(id);
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
    const unclaimed = await this.consumer.close();
    if (unclaimed.length > 0) {
      // Pushed to us but never started: back to the queue as they were, so no attempt is charged. A nack
      // would make the broker flag them redelivered, which reads as a lost attempt.
      await this.putBack(unclaimed, (d) => d.json).catch((error: unknown) =>
        this.options.logger?.warn("could not return unclaimed jobs at close; they come back as lost attempts", { error: (error as Error).message }),
      );
    }
    await this.connection.close();
  }

  async enqueue({ jobs }: { jobs: Job[] }): Promise<EnqueueResult> {
    let fresh: Job[] = [];
    const seen = new Set<string>();
    for (const job of jobs) {
      if (this.recent.has(job.id) || seen.has(job.id)) continue;
      seen.add(job.id);
      fresh.push(job);
    }
    if (this.queueType === QueueType.quorum) refusePriorities(fresh);
    if (hasUnique(fresh)) return this.enqueueUnique(fresh);
    await this.publishPatiently("enqueue jobs", () => fresh.map((job) => this.route(job, job.availableAt.getTime())));
    for (const job of fresh) this.recent.add(job.id);
    return { inserted: fresh.map((job) => job.id) };
  }

  /**
   * A broker cannot tell whether a message with a key waits somewhere in a queue: the keys are held in the
   * service's database (UniqueStore), taken before the publish and released when the job ends.
   */
  private async enqueueUnique(fresh: Job[]): Promise<EnqueueResult> {
    const store = this.options.uniqueKeys;
    if (!store) {
      throw new NotSupportedError(`a unique "${fresh.find((job) => job.unique)!.task}" job cannot be enqueued: RabbitMQ cannot tell whether a message with its key waits in a queue, and this service has no database to hold the key in`, {
        hint: `enable the "database" plugin: unique keys are then held in jfast_unique_keys`,
        docs: `${DOCS}#unique-jobs`,
      });
    }
    const { publish, duplicates, taken } = await takeUniqueKeys(store, fresh);
    try {
      await this.publishPatiently("enqueue jobs", () => publish.map((job) => this.route(job, job.availableAt.getTime())));
    } catch (error) {
      await store.release({ jobIds: taken.jobIds, state: null }).catch(() => undefined);
      throw error;
    }
    await store.confirm(taken);
    for (const job of publish) this.recent.add(job.id);
    const inserted = publish.map((job) => job.id);
    return duplicates.size > 0 ? { inserted, duplicates } : { inserted };
  }

  /** A unique job that reached `state` gives its key back unless it holds it there (docs/tasks.md#unique-jobs). */
  private async releaseKey(job: Job, state: JobState): Promise<void> {
    if (job.unique?.states && !job.unique.states.includes(state)) await this.options.uniqueKeys?.release({ jobIds: [job.id], state });
  }

  /** The queue's limited tasks (setLimits); their jobs take a slot in the LimitStore before they run. */
  private limited: LimitMap = new Map();

  async setLimits({ limits }: { limits: LimitMap }): Promise<void> {
    if (limits.size > 0 && !this.options.limits) {
      const [task] = limits.keys();
      throw new NotSupportedError(`task "${task}" has a limit, which RabbitMQ cannot count across processes, and this service has no database to count it in`, {
        hint: `enable the "database" plugin ([plugins] enabled = ["database", "queue", ...]): limits are then counted in jfast_task_limits and jfast_task_slots`,
        docs: `${DOCS}#task-limits`,
      });
    }
    await this.options.limits?.setLimits({ limits });
    this.limited = limits;
  }

  async limitUsage({ task }: { task: string }): Promise<LimitUsage> {
    return this.options.limits ? this.options.limits.usage({ task }) : { running: 0, startedInWindow: 0 };
  }

  /**
   * A delivered job of a limited task runs only with a slot taken in the database (docs/rabbitmq.md#task-limits); over
   * its limit it goes back through the delay cascade, its attempt unspent, to be delivered again when the limit
   * may allow it (the rate window's next opening, or half a second for a concurrency limit).
   */
  async claim(params: ClaimParams): Promise<Job[]> {
    const jobs = await this.consumer.claim(params);
    if (this.limited.size === 0 || !jobs.some((job) => this.limited.has(job.task))) return jobs;
    const store = this.options.limits!;
    const kept: Job[] = [];
    for (const job of jobs) {
      if (!this.limited.has(job.task)) {
        kept.push(job);
        continue;
      }
      const taken = await store.take({ task: job.task, jobId: job.id, leaseMs: params.leaseMs });
      if (taken.granted) kept.push(job);
      else await this.release({ workerId: params.workerId, jobs: [job], availableAt: new Date(Date.now() + taken.retryInMs) });
    }
    return kept;
  }

  /** A limited task's job that ended frees its slot. */
  private async freeSlot(job: Job): Promise<void> {
    if (this.limited.has(job.task)) await this.options.limits?.free({ jobIds: [job.id] });
  }

  /** A held job that was cancelled is acked (dropped) here and reported; the rest have their lease extended. */
  async extendLeases(params: { workerId: string; jobIds: string[]; leaseMs: number }): Promise<LeaseReport> {
    const cancelled: string[] = [];
    if (this.cancelledIds.size > 0) {
      for (const id of params.jobIds) {
        if (!this.cancelledIds.has(id)) continue;
        const delivery = this.consumer.takeById(params.workerId, id);
        if (!delivery) continue;
        this.consumer.ack(delivery);
        cancelled.push(id);
      }
    }
    this.consumer.extend(params);
    if (this.limited.size > 0 && this.options.limits) await this.options.limits.extend({ jobIds: params.jobIds, leaseMs: params.leaseMs });
    return { cancelled };
  }

  async complete({ workerId, job }: { workerId: string; job: Job }): Promise<void> {
    const delivery = this.consumer.take(workerId, job);
    if (!delivery) return;
    this.consumer.ack(delivery);
    await this.freeSlot(job);
    if (job.unique) await this.releaseKey(job, JobState.completed);
  }

  async retry(params: { workerId: string; job: Job; error: AttemptError; availableAt: Date }): Promise<void> {
    const delivery = this.consumer.take(params.workerId, params.job);
    if (!delivery) return;
    const json = spent(delivery, params.error);
    json.availableAt = params.availableAt.toISOString();
    await this.replace(delivery, [this.route(json, params.availableAt.getTime(), snoozesOf(delivery))]);
    await this.freeSlot(params.job);
  }

  async kill(params: { workerId: string; job: Job; error: AttemptError }): Promise<void> {
    const delivery = this.consumer.take(params.workerId, params.job);
    if (!delivery) return;
    await this.replace(delivery, [this.toDead(spent(delivery, params.error))]);
    await this.freeSlot(params.job);
    if (params.job.unique) await this.releaseKey(params.job, JobState.dead);
  }

  /**
   * release for one job at a later time through the delay cascade, the message republished as it was published
   * (its attempts never included this delivery) with its snooze count, carried in a header, raised by one.
   */
  async snooze({ workerId, job, availableAt, maxSnoozes }: SnoozeParams): Promise<{ snoozed: boolean }> {
    const held = this.consumer.heldDeliveries().find((d) => d.json.id === job.id && d.workerId === workerId && !d.settled);
    // At the limit the delivery stays this worker's, for kill.
    if (!held || snoozesOf(held) >= maxSnoozes) return { snoozed: false };
    const delivery = this.consumer.take(workerId, job);
    if (!delivery) return { snoozed: false };
    const json: JobJSON = { ...delivery.json, availableAt: availableAt.toISOString() };
    await this.replace(delivery, [this.route(json, availableAt.getTime(), snoozesOf(delivery) + 1)]);
    await this.freeSlot(job);
    return { snoozed: true };
  }

  /**
   * A waiting message cannot be taken out of the middle of a RabbitMQ queue: the cancellation is recorded in the
   * service's database instead, every process reads it within about a second, and the message is dropped when it
   * is delivered; a running job's worker learns it at its next heartbeat. The broker cannot tell whether a job
   * exists or has finished, so any id not already recorded answers `cancelled: true`. Without the database:
   * NotSupportedError (docs/rabbitmq.md#cancelling-a-job).
   */
  async cancel({ id }: { id: string }): Promise<CancelResult> {
    const store = this.options.cancellations;
    if (!store) {
      throw new NotSupportedError(`job ${id} cannot be cancelled: RabbitMQ cannot take a waiting message out of the middle of a queue, and this service has no database to record the cancellation in`, {
        hint: `enable the "database" plugin: cancellations are then recorded in jfast_cancelled_jobs and applied when the message is delivered`,
        docs: `${DOCS}#cancelling-a-job`,
      });
    }
    const fresh = await store.record({ id });
    this.cancelledIds.add(id);
    // Whatever the job is: a key it holds by state and not when cancelled is free now.
    await this.options.uniqueKeys?.release({ jobIds: [id], state: JobState.cancelled });
    if (this.limited.size > 0) await this.options.limits?.free({ jobIds: [id] });
    return { cancelled: fresh, state: JobState.cancelled };
  }

  async release({ workerId, jobs, availableAt }: { workerId: string; jobs: Job[]; availableAt?: Date }): Promise<void> {
    const deliveries = jobs.map((job) => this.consumer.take(workerId, job)).filter((d): d is Delivery => d !== null);
    // The message as it was published: its attempts never included this delivery, so the attempt is returned.
    // A later time (a paused task's job handed back) goes through the delay cascade.
    const at = availableAt && availableAt.getTime() > Date.now() ? availableAt : null;
    await this.putBack(deliveries, (d) => ({ ...d.json, availableAt: (at ?? new Date()).toISOString() }), at?.getTime());
    const limited = jobs.filter((job) => this.limited.has(job.task)).map((job) => job.id);
    if (limited.length > 0) await this.options.limits?.free({ jobIds: limited });
  }

  waitForWork(params: { signal: AbortSignal; timeoutMs: number }): Promise<void> {
    return this.consumer.wait(params);
  }

  /**
   * Dead letters only: a completed, cancelled or acked message is gone from the broker the moment it settles, so
   * there is nothing else to prune (docs/rabbitmq.md#retention).
   */
  async prune({ state, select, limit }: PruneParams): Promise<number> {
    if (state !== RetainedState.dead) return 0;
    return this.dead.prune({ select, limit });
  }

  /**
   * The lease is an exclusive queue, `<queue>.pruner`: the broker lets one connection declare it and drops it with
   * that connection, so a vanished process releases it at once and `ttlMs` is not needed.
   */
  async claimPruner({ owner }: { owner: string; ttlMs: number }): Promise<boolean> {
    if (this.prunerOwner !== null) return this.prunerOwner === owner;
    this.prunerOwner = owner;
    const won = await this.connection.withChannel("claim the pruner", async (channel) => {
      try {
        await channel.assertQueue(this.names.pruner, { exclusive: true, durable: false, autoDelete: false });
        return true;
      } catch (error) {
        // 405 RESOURCE_LOCKED: another connection holds it.
        if ((error as { code?: unknown }).code === 405) return false;
        throw error;
      }
    }).catch((error: unknown) => {
      this.prunerOwner = null;
      throw error;
    });
    if (!won) this.prunerOwner = null;
    return won;
  }

  async releasePruner({ owner }: { owner: string }): Promise<void> {
    if (this.prunerOwner !== owner) return;
    try {
      await this.connection.withChannel("release the pruner", (channel) => channel.deleteQueue(this.names.pruner));
    } finally {
      this.prunerOwner = null;
    }
  }

  listDead(params: { limit: number; offset?: number }): Promise<DeadJob[]> {
    return this.dead.list(params);
  }

  retryDead(params: RetryDeadParams): Promise<{ retried: string[]; missing: string[] }> {
    return this.dead.retry(params);
  }

  /**
   * `jfast keys rotate`: dead letters only. A waiting message cannot be changed in the broker, nor taken out of the
   * middle of a queue and put back without racing the workers; it keeps its key until a worker takes it.
   */
  async rewriteStored(params: { rewrite(parts: StoredParts): StoredParts | null }): Promise<StoredRewriteResult> {
    const { dead, skipped } = await this.dead.rewrite(params);
    return {
      waiting: null,
      waitingNotSupported:
        "RabbitMQ cannot rewrite a message waiting in the broker: waiting jobs keep the key they were encrypted with until a worker takes them, so keep that key in JFAST_ENCRYPTION_KEYS (after the new one) until the queue has drained",
      dead,
      skipped,
    };
  }

  discardDead(params: RetryDeadParams): Promise<{ discarded: string[]; missing: string[] }> {
    return this.dead.discard(params);
  }

  /**
   * ready: the work queue's message count plus what this process was pushed and has not claimed.
   * scheduled: every delay level's message count. running: jobs this process runs (the broker does not report
   * other consumers' unacked messages over AMQP). dead: the dead queue's message count.
   */
  async depths(): Promise<Depths> {
    // Round trips on the consuming channel before and after the counts, so a message is never in flight
    // between the broker's count and our buffer when we add them up.
    if (this.consumer.isConsuming) await this.consumer.barrier();
    const counts = await this.connection.withChannels(DEPTH_CHANNELS, "read queue depths", async (channels) => {
      const names = [this.names.work, this.names.dead, ...Array.from({ length: this.shape.levels }, (_, level) => this.names.delayLevel(level))];
      const counts = await Promise.all(
        channels.map(async (channel, index) => {
          const mine: Array<[string, number]> = [];
          for (let i = index; i < names.length; i += channels.length) mine.push([names[i]!, (await channel.checkQueue(names[i]!)).messageCount]);
          return mine;
        }),
      );
      const byName = new Map(counts.flat());
      const scheduled = names.slice(2).reduce((sum, name) => sum + (byName.get(name) ?? 0), 0);
      return { ready: byName.get(this.names.work) ?? 0, dead: byName.get(this.names.dead) ?? 0, scheduled };
    });
    if (this.consumer.isConsuming) await this.consumer.barrier();
    return { ready: counts.ready + this.consumer.bufferedCount, scheduled: counts.scheduled, running: this.consumer.heldCount, dead: counts.dead };
  }

  /**
   * None of its own: the service keeps paused tasks in its database (or refuses pausing without one). The
   * consumer cannot skip a task's messages, so the worker hands them back through the delay cascade.
   */
  pauseStore(): null {
    return null;
  }

  /** No payload index: the admin API reads a bounded number of dead letters instead (docs/admin-api.md#job-search). */
  async searchDead(): Promise<{ rows: DeadJob[]; next: string | null }> {
    throw new NotSupportedError("the RabbitMQ queue keeps no index of dead letters' payloads", {
      hint: "search by payload reads the newest dead letters instead; the PostgreSQL queue answers it through an index",
      docs: "jfast docs admin-api#job-search",
    });
  }

  /** The service keeps throughput counts in its database, or in memory. */
  throughputStore(): null {
    return null;
  }

  /**
   * Not counted per task: the work queue and the delay cascade hold every task's messages, and the broker reports
   * only a queue's total; counting per task would mean taking every message out. depths() has the totals.
   */
  async depthsByTask(): Promise<TaskDepths> {
    throw new NotSupportedError("RabbitMQ does not count messages per task: a queue holds every task's messages and reports only its total", {
      hint: "the queue's totals are in depths() (/queue/stats); for per-task depths use the postgres or redis backend",
      docs: `${DOCS}#limits`,
    });
  }

  /**
   * Dead letters only, from the dead-letter queue (browsed and put back, as listDead does). A waiting message
   * cannot be read without taking it out of its queue, and the broker keeps no record of a running, completed or
   * cancelled job: NotSupportedError naming why (docs/rabbitmq.md#limits).
   */
  async listJobs(params: ListJobsParams): Promise<JobListing> {
    if (params.state === ListState.dead) return this.dead.page(params);
    throw new NotSupportedError(`RabbitMQ cannot list ${params.state} jobs: ${UNLISTABLE[params.state]}`, {
      hint: "dead letters can be listed; look a job up by id (running in this process, or dead), or use the postgres or redis backend to browse every state",
      docs: `${DOCS}#limits`,
    });
  }

  /** A waiting message cannot be changed in place nor taken out of the middle of its queue. */
  async runNow({ id }: { id: string }): Promise<JobActionResult> {
    throw new NotSupportedError(`job ${id} cannot be run now: RabbitMQ cannot take a waiting message out of the middle of a queue or change its delay`, {
      hint: "enqueue a new job with the same payload instead, and cancel this one",
      docs: `${DOCS}#limits`,
    });
  }

  async deleteJob({ id }: { id: string }): Promise<JobActionResult> {
    throw new NotSupportedError(`job ${id} cannot be deleted: RabbitMQ cannot take a waiting message out of the middle of a queue`, {
      hint: "cancel it instead (jfast jobs cancel): the cancellation is recorded and the message dropped when it is delivered",
      docs: `${DOCS}#limits`,
    });
  }

  /**
   * Finds a job this process holds (running or pushed to it) or a dead letter. A job waiting in the work queue
   * or the cascade cannot be looked up by id in RabbitMQ without taking it out: NotSupportedError.
   */
  async getJob({ id }: { id: string }): Promise<JobInfo | null> {
    const running = this.consumer.heldDeliveries().find((d) => d.json.id === id);
    if (running) {
      return {
        job: { ...structuredClone(running.json), attempts: running.json.attempts + 1 },
        state: this.cancelledIds.has(id) ? JobState.cancelled : JobState.running,
        lockedBy: running.workerId,
        lockedUntil: running.lockedUntil === null ? null : new Date(running.lockedUntil).toISOString(),
        diedAt: null,
      };
    }
    const pushed = this.consumer.bufferedDeliveries().find((d) => d.json.id === id);
    if (pushed) return { job: structuredClone(pushed.json), state: JobState.ready, lockedBy: null, lockedUntil: null, diedAt: null };
    const dead = await this.dead.find(id);
    if (dead) return { job: dead.json, state: JobState.dead, lockedBy: null, lockedUntil: null, diedAt: new Date(dead.diedAt).toISOString() };
    throw new NotSupportedError(`job ${id} is not a dead letter and not running in this process; RabbitMQ cannot look up a waiting message by id`, {
      hint: "dead letters and jobs this process runs can be looked up; for jobs waiting in the queue use the RabbitMQ management UI",
      docs: `${DOCS}#limits`,
    });
  }

  /** Where a job goes to become claimable at `dueMs`: the work queue now, or into the delay cascade. */
  private route(json: JobJSON | Job, dueMs: number, snoozes = 0): Publication {
    const delayMs = dueMs - Date.now();
    const carried = snoozes > 0 ? { snoozes } : {};
    if (delayMs <= 0) return { exchange: "", routingKey: this.names.work, message: encodeJob(json, carried) };
    const plan = planDelay(delayMs, this.shape);
    return {
      exchange: this.names.delayLevel(plan.entryLevel),
      routingKey: plan.routingKey,
      message: encodeJob(json, plan.overflow ? { dueAt: dueMs, ...carried } : carried),
    };
  }

  private toDead(json: JobJSON): Publication {
    return { exchange: "", routingKey: this.names.dead, message: encodeJob(json, { diedAt: Date.now() }) };
  }

  /** Publishes what replaces a delivery, then acks it (Consumer.replace). If the publish fails it goes back (lost attempt). */
  private replace(delivery: Delivery, publications: Publication[]): Promise<void> {
    return this.consumer.replace([delivery.json.id], [delivery], () => this.connection.publish("record the job's outcome", publications));
  }

  private putBack(deliveries: Delivery[], json: (d: Delivery) => JobJSON, dueMs?: number): Promise<void> {
    if (deliveries.length === 0) return Promise.resolve();
    return this.consumer.replace(
      deliveries.map((d) => d.json.id),
      deliveries,
      () =>
        this.connection.publish(
          "return jobs to the queue",
          deliveries.map((d) =>
            dueMs === undefined
              ? { exchange: "", routingKey: this.names.work, message: encodeJob(json(d), { snoozes: snoozesOf(d) }) }
              : this.route(json(d), dueMs, snoozesOf(d)),
          ),
        ),
    );
  }

  /** Handles an arrival that is not handed out: records a lost attempt, sends an early one round, buries garbage. */
  private async repair(arrival: Exclude<Arrival, { kind: "ready" }>, message: ConsumeMessage): Promise<void> {
    const snoozes = numberHeader(message.properties.headers, Header.snoozes) ?? 0;
    if (arrival.kind === "early") {
      await this.connection.publish("send a long delay round the cascade again", [this.route(arrival.json, arrival.dueAt, snoozes)]);
      return;
    }
    if (arrival.kind === "unreadable") {
      const json = unreadableJob({
        content: message.content,
        reason: arrival.reason,
        queue: this.names.work,
        messageId: message.properties.messageId,
        exchange: message.fields.exchange,
        routingKey: message.fields.routingKey,
        headers: message.properties.headers,
      });
      this.options.logger?.error("dead-lettered a message that is not a jfast job", { id: json.id, reason: arrival.reason });
      await this.connection.publish("dead-letter an unreadable message", [this.toDead(json)]);
      return;
    }
    // lost: the attempt it was delivered for is spent. Record it in a fresh message (the redelivered one
    // cannot be changed), dead when it was the last one.
    const attempt = arrival.json.attempts + 1;
    const json: JobJSON = { ...arrival.json, attempts: attempt, errors: [...arrival.json.errors, workerLostError(attempt)] };
    const spentAll = attempt >= (json.maxAttempts ?? 1);
    await this.connection.publish("record a lost attempt", [
      spentAll ? this.toDead(json) : { exchange: "", routingKey: this.names.work, message: encodeJob(json, { snoozes }) },
    ]);
  }

  /** Publishes, waiting out a broker restart: an unconfirmed publish is retried (a duplicate, never a loss). */
  private async publishPatiently(operation: string, build: () => Publication[]): Promise<void> {
    const deadline = Date.now() + this.connectTimeoutMs;
    for (;;) {
      try {
        await this.connection.publish(operation, build());
        return;
      } catch (error) {
        const retryable = error instanceof JfastError && error.code === ErrorCode.BACKEND_UNAVAILABLE;
        if (!retryable || Date.now() >= deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  }
}

/** How many times the delivered job snoozed before (Header.snoozes). */
function snoozesOf(delivery: Delivery): number {
  return numberHeader(delivery.message.properties.headers, Header.snoozes) ?? 0;
}

/** The stored job with the attempt it was delivered for counted and its error recorded. */
function spent(delivery: Delivery, error: AttemptError): JobJSON {
  const json = structuredClone(delivery.json);
  json.attempts += 1;
  json.errors.push(error);
  return json;
}

function withHeartbeat(url: string, seconds: number): string {
  if (/[?&]heartbeat=/.test(url)) return url;
  return `${url}${url.includes("?") ? "&" : "?"}heartbeat=${seconds}`;
}

export function createRabbitMqBackend(options: RabbitMqBackendOptions): RabbitMqBackend {
  return new RabbitMqBackend(options);
}

/** RabbitMQ 3.10's quorum queues keep no message priority: a job that asks for one is refused, not run out of order. */
function refusePriorities(jobs: readonly Job[]): void {
  const job = jobs.find((j) => j.priority !== DEFAULT_PRIORITY);
  if (!job) return;
  throw new NotSupportedError(`a "${job.task}" job of priority ${job.priority} cannot be enqueued on a quorum queue: RabbitMQ 3.10's quorum queues deliver in arrival order and keep no message priority`, {
    hint: `leave the job at the default priority (5), or use queue_type = "classic", whose work queue is a priority queue`,
    docs: `${DOCS}#priority-queue`,
  });
}
