import type { Cluster, Redis } from "ioredis";
import { siblingModule, type LeaseExtenderSpec } from "../../core/lease-extender.js";
import type { AttemptError, Job } from "../../core/job.js";
import {
  BackendKind,
  notSupported,
  workerLostError,
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
  type SlotOffer,
  type SnoozeParams,
  type TaskDepths,
} from "../../core/queue-backend.js";
import { LimitedTasks } from "../../core/backend/limited-tasks.js";
import { SlotOffers } from "../../core/backend/slot-offers.js";
import type { LimitMap, LimitUsage } from "../../core/limits.js";
import { CompletionBatcher } from "../../core/completion-batcher.js";
import type { PauseStore } from "../../core/pause.js";
import type { PruneParams } from "../../core/retention.js";
import type { StoredParts, StoredRewriteResult } from "../../core/stored-rewrite.js";
import type { BlockedKey } from "../../core/backend/admin.js";
import * as blocked from "./blocked-keys.js";
import type { ThroughputStore } from "../../core/throughput.js";
import { flowWithinRefused, type FlowDetail, type FlowSummary, type ListFlowsParams } from "../../core/backend/flows.js";
import type { FlowPlan, ParentOutcome } from "../../core/flow.js";
import { BackendError } from "../../errors/jfast-error.js";
import * as admin from "./admin.js";
import * as flows from "./flows.js";
import { capabilities } from "./capabilities.js";
import { claim } from "./claim.js";
import { connectToSlotNode, slotNode, unblock } from "./cluster-node.js";
import { openConnection, waitUntilReady, type ConnectionRole, type RedisClient } from "./connection.js";
import type { RedisQueue } from "./context.js";
import type { RedisBackendOptions } from "./options.js";
import { enqueue } from "./enqueue.js";
import { translateRedisError } from "./errors.js";
import { requireVersion } from "./server-version.js";
import { queueKeys, type QueueKeys } from "./keys.js";
import * as maintenance from "./maintenance.js";
import * as outcomes from "./outcomes.js";
import * as deadlines from "./deadlines.js";
import { hasDeadline } from "../../core/deadline.js";
import { hasDebounce } from "../../core/debounce.js";
import { enqueueDebounced } from "./debounce.js";
import { createRedisPauseStore } from "./pause-store.js";
import { createRedisThroughputStore } from "./throughput-store.js";
import { createRedisWorkerStore } from "./worker-store.js";
import type { WorkerStore } from "../../core/backend/workers.js";
import { ReadyWaiter } from "./ready-waiter.js";
import { completeArgsWithLife, completeArgsWithResults } from "./results.js";
import type { JobProgress } from "../../core/job-life.js";
import { defineScripts, type ReplicaWait, type ScriptName, type ScriptRunner } from "./scripts.js";

export type { RedisBackendOptions } from "./options.js";

/**
 * With limited tasks, an idle worker looks again at least this often: a parked job of a task whose slot freed
 * or whose rate window moved on is on no list a worker blocks on (docs/tasks.md#limits).
 */
const LIMIT_RECHECK_MS = 250;

/**
 * The Redis queue. Layout in keys.ts, every state change one Lua script in scripts/ (atomic, so a crash
 * between two commands cannot lose a job). How waiting works: ready-waiter.ts. How recovery works:
 *  - every claim records a lease (running ZSET) and puts the id in the worker's processing list, in one step;
 *  - an expired lease is reclaimed by the next claim with "worker lost" recorded (dead if it was the last attempt);
 *  - each worker also refreshes a heartbeat key with a TTL; when it expires, any live backend (on setup and on
 *    a timer) returns that worker's processing list the same way, without waiting for the leases;
 *  - on shutdown a worker returns whatever is still in its own list, and so does the first claim under an id
 *    a previous process used.
 */
export class RedisBackend implements QueueBackend {
  readonly kind = BackendKind.redis;
  readonly capabilities = capabilities;
  readonly keys: QueueKeys;
  private readonly redis: RedisClient;
  private readonly run: ScriptRunner;
  /** Cluster: the slot of the queue's hash tag, learnt on setup (the blocking wait goes to the node serving it). */
  private slot = -1;
  private readonly waiter: ReadyWaiter;
  /** What the operations work on (context.ts). */
  private readonly q: RedisQueue;
  /** Completions that arrive while one complete.lua call is in flight go together in the next call. */
  private readonly completions: CompletionBatcher;
  private timer: NodeJS.Timeout | null = null;
  /** Hears "a job was scheduled for <ms>" from every process; opened by the first wait. */
  private subscriber: RedisClient | null = null;
  private closed = false;
  /** Set once close() starts returning this process's processing lists: no new waits, commands still go through. */
  private closing: Promise<void> | null = null;
  /** The socket error behind "Connection is closed" (ECONNREFUSED, ENOTFOUND...), for a useful start-up error. */
  private lastConnectionError: Error | null = null;
  private pauses: PauseStore | null = null;

  constructor(private readonly options: RedisBackendOptions) {
    this.keys = queueKeys({ queue: options.queue, ...(options.prefix ? { prefix: options.prefix } : {}) });
    const completedRetentionMs = options.completedRetentionMs ?? 24 * 60 * 60 * 1000;
    this.redis = this.connect("commands");
    this.run = defineScripts(this.redis, { cluster: options.cluster === true });
    const waitReplicas = options.waitReplicas ?? 0;
    this.waiter = new ReadyWaiter({
      connect: () => (options.cluster ? connectToSlotNode(this.slotNode(), options) : (this.connect("wait") as Redis)),
      readyKey: this.keys.ready,
      unblock: (clientId, blocked) => unblock({ redis: this.redis, cluster: options.cluster === true, clientId, blocked }),
      ...(options.cluster ? { route: () => this.slotNode() } : {}),
    });
    const { attempt: _attempt, at: _at, ...rest } = workerLostError(0);
    this.q = {
      options,
      keys: this.keys,
      redis: this.redis,
      replicaWait: waitReplicas > 0 ? { replicas: waitReplicas, timeoutMs: options.waitTimeoutMs ?? 1000 } : undefined,
      workerTtlMs: options.workerTtlMs ?? 30_000,
      completedRetentionMs,
      cancelledRetentionMs: options.cancelledRetentionMs ?? completedRetentionMs,
      lostTail: JSON.stringify(rest).slice(1),
      held: new Map(),
      offers: new SlotOffers(),
      limited: new LimitedTasks(),
      fairClaims: 0,
      script: (name, operation, args, wait) => this.script(name, operation, args, wait),
      guard: (operation, fn) => this.guard(operation, fn),
      announce: (dueMs) => this.announce(dueMs),
    };
    this.completions = new CompletionBatcher(async (ids, workerId, results, runs) => {
      // A refused id (no longer this worker's) is left to its new owner, as a completion of it alone would be. Results
      // go even with a retention of 0: it deletes a plain job, results and all, but keeps a flow step's for the steps
      // after it until its flow completes (complete.lua).
      const retention = this.q.completedRetentionMs;
      // Attempts' records (core/job-life.ts) ride in the same call ('life').
      const jobs = runs
        ? ["life", ...completeArgsWithLife(ids, results, runs)]
        : results
          ? ["results", ...completeArgsWithResults(ids, results)]
          : ["", ...ids];
      await this.script("complete", "complete jobs", [workerId, retention, ...jobs], this.q.replicaWait);
      const held = this.q.held.get(workerId);
      for (const id of ids) held?.delete(id);
    });
  }

  /**
   * Connected (the heartbeat thread's backend, lease-extender.ts): its first extension then needs no connection of
   * its own first. Nothing else of setup() (the sweep, the tick).
   */
  async connected(): Promise<void> {
    await waitUntilReady(this.redis, { deadline: Date.now() + (this.options.startupWaitMs ?? 10_000), lastError: () => this.lastConnectionError });
  }

  async setup(): Promise<void> {
    try {
      await this.connected();
      if (this.options.cluster) this.slot = Number(await (this.redis as Cluster).cluster("KEYSLOT", this.keys.ready));
      await requireVersion(this.redis, this.options);
    } catch (error) {
      // Fail start-up loudly instead of retrying in the background forever, naming the socket error if any.
      this.redis.disconnect(false);
      const cause = error instanceof BackendError ? error : (this.lastConnectionError ?? error);
      throw translateRedisError(cause, { operation: "connect", url: this.options.url, queue: this.options.queue });
    }
    await this.sweep();
    const every = Math.max(50, Math.floor(this.q.workerTtlMs / 3));
    this.timer = setInterval(() => void this.tick(), every);
    this.timer.unref();
  }

  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.waiter.close();
    this.subscriber?.disconnect(false);
    // Completions already handed to us are written before the processing lists are returned, or their jobs would
    // come back as "worker lost" and run again.
    await this.completions.flush();
    for (const workerId of this.q.held.keys()) {
      try {
        await this.script("recover", "return its processing list", ["own", workerId, this.q.lostTail]);
      } catch (error) {
        // Not lost: the heartbeat key expires and another worker returns the list.
        this.options.logger?.warn("could not return this worker's processing list at shutdown; another worker will", { error, worker_id: workerId });
      }
    }
    this.q.held.clear();
    this.closed = true;
    await this.redis.quit().catch(() => this.redis.disconnect(false));
  }

  enqueue(params: { jobs: Job[] }): Promise<EnqueueResult> {
    if (hasDebounce(params.jobs)) {
      const enqueuePlain = (q: RedisQueue, p: { jobs: Job[] }) => (hasDeadline(p.jobs) ? deadlines.enqueueWithDeadlines(q, p.jobs, enqueue) : enqueue(q, p));
      return enqueueDebounced(this.q, params.jobs, enqueuePlain);
    }
    if (hasDeadline(params.jobs)) return deadlines.enqueueWithDeadlines(this.q, params.jobs, enqueue);
    return enqueue(this.q, params);
  }

  async enqueueWithin(): Promise<EnqueueResult> {
    throw notSupported("transactionalEnqueue", "the Redis queue cannot write jobs in a SQL transaction", {
      hint: "outbox.enqueue writes a jfast_outbox row in the transaction instead, moved by the relay after commit",
    });
  }

  offerSlots(offer: SlotOffer): () => void {
    return this.q.offers.add(offer);
  }

  claim(params: ClaimParams): Promise<Job[]> {
    return claim(this.q, params);
  }

  leaseExtender(): LeaseExtenderSpec {
    const { url, cluster, queue, prefix } = this.options;
    const options = { url, queue, workerTtlMs: this.q.workerTtlMs, ...(cluster ? { cluster } : {}), ...(prefix ? { prefix } : {}) };
    return { module: siblingModule(import.meta.url, "lease-extender"), options };
  }

  extendLeases(params: { workerId: string; jobIds: string[]; leaseMs: number }): Promise<LeaseReport> {
    return outcomes.extendLeases(this.q, params);
  }

  complete({ workerId, job, result, spawn, run }: CompleteParams): Promise<void> {
    if (spawn && spawn.length > 0) return flows.completeSpawning(this.q, { workerId, job, result, spawn, run });
    // A retention of 0 deletes a plain job at its completion: its record would go with it.
    const kept = this.q.completedRetentionMs > 0 || job.flow !== null;
    return this.completions.add(job.id, workerId, result, kept ? run : undefined);
  }

  setProgress(params: { workerId: string; job: Job; progress: JobProgress }): Promise<void> {
    return outcomes.setProgress(this.q, params);
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

  expireDue(params: { limit: number }): Promise<number> {
    return deadlines.expireDue(this.q, params);
  }

  release(params: { workerId: string; jobs: Job[]; availableAt?: Date }): Promise<void> {
    return outcomes.release(this.q, params);
  }

  snooze(params: SnoozeParams): Promise<{ snoozed: boolean }> {
    return outcomes.snooze(this.q, params);
  }

  cancel(params: { id: string }): Promise<CancelResult> {
    return outcomes.cancel(this.q, params);
  }

  /** Flows (docs/redis.md#flows): written whole by one script; each outcome script does its step's fan-in. */
  enqueueFlow(params: { flow: FlowPlan }): Promise<{ created: boolean }> {
    return flows.enqueueFlow(this.q, params);
  }

  async enqueueFlowWithin(): Promise<{ created: boolean }> {
    throw flowWithinRefused("the Redis queue");
  }

  parentOutcomes(params: { jobIds: readonly string[] }): Promise<Map<string, ParentOutcome>> {
    return flows.parentOutcomes(this.q, params);
  }

  listFlows(params: ListFlowsParams): Promise<{ rows: FlowSummary[]; next: string | null }> {
    return flows.listFlows(this.q, params);
  }

  getFlow(params: { id: string }): Promise<FlowDetail | null> {
    return flows.getFlow(this.q, params);
  }

  cancelFlow(params: { id: string }): Promise<{ cancelled: string[] } | null> {
    return flows.cancelFlow(this.q, params);
  }

  setLimits(params: { limits: LimitMap }): Promise<void> {
    return maintenance.setLimits(this.q, params);
  }

  limitUsage(params: { task: string }): Promise<LimitUsage> {
    return maintenance.limitUsage(this.q, params);
  }

  async waitForWork({ signal, timeoutMs }: { signal: AbortSignal; timeoutMs: number }): Promise<void> {
    if (signal.aborted || this.closed || this.closing) return;
    this.listen();
    // Promote what is due, and learn when the next delayed job or lease comes due: block no longer than that.
    const [readyLength, nextDue, nextLease] = (await this.script("promote", "look for work", [])) as [number, string, string];
    if (readyLength > 0) return;
    const now = Date.now();
    let waitMs = this.q.limited.size > 0 ? Math.min(timeoutMs, LIMIT_RECHECK_MS) : timeoutMs;
    for (const at of [Number(nextDue), Number(nextLease) + 1]) {
      if (at > 0) waitMs = Math.min(waitMs, at - now);
    }
    if (waitMs <= 0) return;
    try {
      await this.waiter.wait({ timeoutMs: waitMs, signal });
    } catch (error) {
      if (this.closed || this.closing || signal.aborted) return;
      throw translateRedisError(error, { operation: "wait for work", url: this.options.url, queue: this.options.queue });
    }
  }

  getJob(params: { id: string }): Promise<JobInfo | null> {
    return admin.getJob(this.q, params);
  }

  listJobs(params: ListJobsParams): Promise<JobListing> {
    return admin.listJobs(this.q, params);
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

  depths(): Promise<Depths> {
    return admin.depths(this.q);
  }

  depthsByTask(params?: { tenantId?: string | undefined }): Promise<TaskDepths> {
    return admin.depthsByTask(this.q, params);
  }

  listDead(params: { limit: number; offset?: number }): Promise<DeadJob[]> {
    return admin.listDead(this.q, params);
  }

  /** No payload index: the admin API reads a bounded number of dead letters instead (docs/admin-api.md#job-search). */
  /** No index by request id: the admin API reads a bounded window of each state instead (docs/admin-api.md#timeline). */
  async jobsByRequest(): Promise<RequestJob[]> {
    throw notSupported("requestIndex", "the Redis queue keeps no index of jobs by request id", {
      hint: "a timeline reads the newest jobs of each state instead; the PostgreSQL queue finds a request's jobs through an index",
    });
  }

  async searchDead(): Promise<{ rows: DeadJob[]; next: string | null }> {
    throw notSupported("payloadIndex", "the Redis queue keeps no index of dead letters' payloads", {
      hint: "search by payload reads the newest dead letters instead; the PostgreSQL queue answers it through an index",
    });
  }

  retryDead(params: RetryDeadParams): Promise<{ retried: string[]; missing: string[] }> {
    return admin.retryDead(this.q, params);
  }

  discardDead(params: RetryDeadParams): Promise<{ discarded: string[]; missing: string[] }> {
    return admin.discardDead(this.q, params);
  }

  rewriteStored(params: { rewrite(parts: StoredParts): StoredParts | null }): Promise<StoredRewriteResult> {
    return admin.rewriteStored(this.q, params);
  }

  blockedKeys(params: { limit: number }): Promise<BlockedKey[]> {
    return blocked.blockedKeys(this.q, params);
  }

  skipBlockedKey(params: { task: string; key: string }): Promise<{ skipped: string[] }> {
    return blocked.skipBlockedKey(this.q, params);
  }

  prune(params: PruneParams): Promise<number> {
    return maintenance.prune(this.q, params);
  }

  pruneKeys(params: { limit: number }): Promise<number> {
    return maintenance.pruneKeys(this.q, params);
  }

  claimPruner(params: { owner: string; ttlMs: number }): Promise<boolean> {
    return maintenance.claimPruner(this.q, params);
  }

  releasePruner(params: { owner: string }): Promise<void> {
    return maintenance.releasePruner(this.q, params);
  }

  /** Paused tasks live in this queue's keys, where claim.lua reads them (pause-store.ts). */
  pauseStore(): PauseStore {
    this.pauses ??= createRedisPauseStore({
      keys: this.keys,
      guard: (operation, fn) => this.guard(operation, () => fn(this.redis)),
      resume: (args) => this.script("resume", "resume a task", args),
    });
    return this.pauses;
  }

  /** Per-minute throughput counts in this queue's keys, expiring after 7 days (throughput-store.ts). */
  throughputStore(): ThroughputStore {
    return createRedisThroughputStore({ keys: this.keys, guard: (operation, fn) => this.guard(operation, () => fn(this.redis)) });
  }

  /** The worker registry in this queue's keys (worker-store.ts), written by each worker's own timer. */
  workerStore(): WorkerStore {
    return createRedisWorkerStore({ keys: this.keys, guard: (operation, fn) => this.guard(operation, () => fn(this.redis)) });
  }

  /** Returns the processing lists of workers whose heartbeat expired. Runs on setup and on the heartbeat timer. */
  sweep(): Promise<{ jobs: number; workers: number }> {
    return maintenance.sweep(this.q);
  }

  /**
   * Tells idle workers everywhere that a job was scheduled for `dueMs`, so a wait planned to end later re-plans.
   * A hint sent after the write: if it is lost, the waiter still wakes at its poll interval.
   */
  private async announce(dueMs: number): Promise<void> {
    this.waiter.interrupt(dueMs);
    await this.redis.publish(this.keys.wakeChannel, String(dueMs)).catch(() => undefined);
  }

  private listen(): void {
    if (this.subscriber || this.closed) return;
    const subscriber = this.connect("wake");
    this.subscriber = subscriber;
    subscriber.on("message", (_channel: string, message: string) => {
      const due = Number(message);
      if (Number.isFinite(due)) this.waiter.interrupt(due);
    });
    // ioredis subscribes again by itself after a reconnect.
    subscriber.subscribe(this.keys.wakeChannel).catch((error: unknown) => {
      this.options.logger?.warn("could not subscribe to the queue's wake-up channel; delayed jobs may start up to one poll interval late", { error: (error as Error).message });
    });
  }

  private async tick(): Promise<void> {
    if (this.closed) return;
    try {
      const now = Date.now();
      if (this.q.held.size > 0) {
        const pipeline = this.redis.pipeline();
        for (const workerId of this.q.held.keys()) {
          pipeline.set(this.keys.worker(workerId), now, "PX", this.q.workerTtlMs);
          pipeline.zadd(this.keys.workers, now, workerId);
        }
        await pipeline.exec();
      }
      await this.sweep();
    } catch (error) {
      this.options.logger?.warn("Redis queue heartbeat failed; retrying", { error: (error as Error).message });
    }
  }

  private script(name: ScriptName, operation: string, args: ReadonlyArray<string | number>, wait?: ReplicaWait): Promise<unknown> {
    const now = Date.now();
    const { keys } = this;
    return this.guard(operation, () =>
      this.run(name, keys.scriptKeys, [keys.jobPrefix, keys.processingPrefix, keys.workerPrefix, now, new Date(now).toISOString(), ...args], wait),
    );
  }

  private async guard<T>(operation: string, fn: () => Promise<T>): Promise<T> {
    if (this.closed) {
      throw new BackendError(`the Redis queue "${this.options.queue}" is closed; it cannot ${operation}`, {
        code: "BACKEND_CLOSED",
        hint: "create a new backend (or restart jfast) after close()",
        docs: "jfast docs redis",
      });
    }
    try {
      return await fn();
    } catch (error) {
      throw translateRedisError(error, { operation, url: this.options.url, queue: this.options.queue });
    }
  }

  /** Cluster: "host:port" of the primary serving the queue's slot, as the client last learnt it ("" until known). */
  private slotNode(): string {
    return slotNode(this.redis as Cluster, this.slot);
  }

  private connect(role: ConnectionRole): RedisClient {
    return openConnection({
      url: this.options.url,
      ...(this.options.cluster ? { cluster: true } : {}),
      queue: this.options.queue,
      role,
      onError: (error) => {
        if (role === "commands") this.lastConnectionError = error;
      },
    });
  }
}

export function createRedisBackend(options: RedisBackendOptions): RedisBackend {
  return new RedisBackend(options);
}
