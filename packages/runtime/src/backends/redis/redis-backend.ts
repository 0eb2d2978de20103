import type { Cluster, Redis } from "ioredis";
import { siblingModule, type LeaseExtenderSpec } from "../../core/lease-extender.js";
import { claimedCopy, Job, type AttemptError } from "../../core/job.js";
import {
  BackendKind,
  workerLostError,
  type CancelResult,
  type ClaimParams,
  type DeadJob,
  type Depths,
  type EnqueueResult,
  type JobActionResult,
  type JobInfo,
  type JobListing,
  type LeaseReport,
  type ListJobsParams,
  type QueueBackend,
  type RetryDeadParams,
  type SlotOffer,
  type SnoozeParams,
  type TaskDepths,
} from "../../core/queue-backend.js";
import { CorruptJob } from "../../core/corrupt-job.js";
import { JobState } from "../../core/job-state.js";
import { reserveSlots } from "../../core/slot-offers.js";
import { hasUnique, scopedUniqueKey } from "../../core/unique.js";
import type { LimitMap, LimitUsage } from "../../core/limits.js";
import { CompletionBatcher } from "../../core/completion-batcher.js";
import type { PauseStore } from "../../core/pause.js";
import { RetainedState, type PruneParams } from "../../core/retention.js";
import type { ThroughputStore } from "../../core/throughput.js";
import { BackendError, NotSupportedError } from "../../errors/jfast-error.js";
import { openConnection, openNodeConnection, parseRedisUrl, waitUntilReady, type ConnectionRole, type RedisClient } from "./connection.js";
import { decodeJob, decodeJobForDisplay, msToIso, type StoredFields } from "./decode.js";
import { redactUrl, translateRedisError } from "./errors.js";
import { queueKeys, type QueueKeys } from "./keys.js";
import { listRedisJobs } from "./listing.js";
import { listById } from "../../core/job-listing.js";
import { createRedisPauseStore } from "./pause-store.js";
import { createRedisThroughputStore } from "./throughput-store.js";
import { ReadyWaiter } from "./ready-waiter.js";
import type { StoredParts, StoredRewriteResult } from "../../core/stored-rewrite.js";
import { rewriteStoredJobs } from "./rewrite-stored.js";
import { defineScripts, type ReplicaWait, type ScriptName, type ScriptRunner } from "./scripts.js";

export interface RedisBackendOptions {
  /** redis://[user:password@]host:port[/db] (rediss:// for TLS); with `cluster`, one or more seed nodes, comma-separated. */
  url: string;
  /** Connect through the Redis Cluster client (every key of the queue is in one slot: its hash tag). */
  cluster?: boolean;
  /**
   * Replicas that must acknowledge an enqueue and a completion before it returns (WAIT): what a primary lost
   * right after acknowledging may otherwise take with it (docs/redis.md#wait-replicas). 0 (default): no wait.
   */
  waitReplicas?: number;
  /** How long WAIT may take before the write fails as BACKEND_NOT_REPLICATED; default 1 s. */
  waitTimeoutMs?: number;
  /** The queue name; it becomes the hash tag `{<queue>}` every key of the queue carries. */
  queue: string;
  /** Put in front of every key, outside the hash tag (several apps sharing one Redis). */
  prefix?: string;
  /**
   * How long a worker's heartbeat key lives without a refresh. Past it the worker counts as gone and any live
   * worker returns the jobs in its processing list. Refreshed every third of this; default 30 s.
   */
  workerTtlMs?: number;
  /** How long a completed job is kept (job detail, and enqueue of its id stays a no-op); default 24 h; 0 keeps none. */
  completedRetentionMs?: number;
  /**
   * How long a cancelled job's hash lives at most (its own expiry; the pruner may delete it sooner); default as long as
   * a completed one; 0: until the pruner deletes it. Never less than an hour (see cancel()).
   */
  cancelledRetentionMs?: number;
  /** How long setup() waits for Redis to answer before start-up fails (rides out a restart); default 10 s. */
  startupWaitMs?: number;
  logger?: { warn(message: string, fields?: Record<string, unknown>): void };
}

type Row = [id: string, ...fields: StoredFields];

const MAX_WORKERS_PER_SWEEP = 100;
/** A batch this large goes to the ready list whole: a worker's few free slots are not worth the extra arguments. */
const HAND_OFF_MAX_BATCH = 2000;
const DEAD_BATCH = 500;
const MIN_REDIS = [6, 2] as const;
/** Cluster: the scripts' shebang (one slot enforced by the server, scripts.ts) needs Redis 7. */
const MIN_REDIS_CLUSTER = [7, 0] as const;
/** Jobs read per structure to count depths per task; larger structures are estimated from this many. */
const TASK_SAMPLE = 1000;
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
  readonly keys: QueueKeys;
  private readonly redis: RedisClient;
  private readonly run: ScriptRunner;
  /** Cluster: the slot of the queue's hash tag, learnt on setup (the blocking wait goes to the node serving it). */
  private slot = -1;
  private readonly replicaWait: ReplicaWait | undefined;
  private readonly waiter: ReadyWaiter;
  private readonly workerTtlMs: number;
  private readonly completedRetentionMs: number;
  private readonly cancelledRetentionMs: number;
  /** Per worker id: jobs handed to it and not settled yet. Anything else in its processing list is re-delivered. */
  private readonly held = new Map<string, Set<string>>();
  /** Completions that arrive while one complete.lua call is in flight go together in the next call. */
  private readonly completions: CompletionBatcher;
  private readonly lostTail: string;
  private timer: NodeJS.Timeout | null = null;
  /** Hears "a job was scheduled for <ms>" from every process; opened by the first wait. */
  private subscriber: RedisClient | null = null;
  private closed = false;
  /** Set once close() starts returning this process's processing lists: no new waits, commands still go through. */
  private closing: Promise<void> | null = null;
  /** The socket error behind "Connection is closed" (ECONNREFUSED, ENOTFOUND...), for a useful start-up error. */
  private lastConnectionError: Error | null = null;
  private pauses: PauseStore | null = null;
  /** Idle workers of this process offering their free slots (offerSlots). */
  private readonly offers = new Set<SlotOffer>();
  /** The queue's limited tasks (setLimits); none: claim.lua reads no limit. */
  private limitedTasks: string[] = [];
  private limitedSet: ReadonlySet<string> = new Set();

  constructor(private readonly options: RedisBackendOptions) {
    this.keys = queueKeys({ queue: options.queue, ...(options.prefix ? { prefix: options.prefix } : {}) });
    this.workerTtlMs = options.workerTtlMs ?? 30_000;
    this.completedRetentionMs = options.completedRetentionMs ?? 24 * 60 * 60 * 1000;
    this.cancelledRetentionMs = options.cancelledRetentionMs ?? this.completedRetentionMs;
    this.redis = this.connect("commands");
    this.run = defineScripts(this.redis, { cluster: options.cluster === true });
    const waitReplicas = options.waitReplicas ?? 0;
    this.replicaWait = waitReplicas > 0 ? { replicas: waitReplicas, timeoutMs: options.waitTimeoutMs ?? 1000 } : undefined;
    this.waiter = new ReadyWaiter({
      connect: () => (options.cluster ? this.connectToSlotNode() : (this.connect("wait") as Redis)),
      readyKey: this.keys.ready,
      unblock: (clientId, blocked) => this.unblock(clientId, blocked),
      ...(options.cluster ? { route: () => this.slotNode() } : {}),
    });
    const { attempt: _attempt, at: _at, ...rest } = workerLostError(0);
    this.lostTail = JSON.stringify(rest).slice(1);
    this.completions = new CompletionBatcher(async (ids, workerId) => {
      // A refused id (no longer this worker's) is left to its new owner, as a completion of it alone would be.
      await this.script("complete", "complete jobs", [workerId, this.completedRetentionMs, ...ids], this.replicaWait);
      const held = this.held.get(workerId);
      for (const id of ids) held?.delete(id);
    });
  }

  async setup(): Promise<void> {
    try {
      await waitUntilReady(this.redis, { deadline: Date.now() + (this.options.startupWaitMs ?? 10_000), lastError: () => this.lastConnectionError });
      if (this.options.cluster) this.slot = Number(await (this.redis as Cluster).cluster("KEYSLOT", this.keys.ready));
      const info = await this.redis.info("server");
      const version = /redis_version:(\d+)\.(\d+)/.exec(info);
      const minimum = this.options.cluster ? MIN_REDIS_CLUSTER : MIN_REDIS;
      if (version && (Number(version[1]) < minimum[0] || (Number(version[1]) === minimum[0] && Number(version[2]) < minimum[1]))) {
        const why = this.options.cluster ? "on Redis Cluster" : "(LMOVE, BLMOVE)";
        throw new BackendError(`the Redis queue needs Redis ${minimum.join(".")} or newer ${why}; ${redactUrl(this.options.url)} runs ${version[1]}.${version[2]}`, {
          code: "BACKEND_UNSUPPORTED",
          hint: "upgrade Redis, or choose [plugin.queue] backend = \"postgres\"",
          docs: "jfast docs redis",
        });
      }
    } catch (error) {
      // Fail start-up loudly instead of retrying in the background forever, naming the socket error if any.
      this.redis.disconnect(false);
      const cause = error instanceof BackendError ? error : (this.lastConnectionError ?? error);
      throw translateRedisError(cause, { operation: "connect", url: this.options.url, queue: this.options.queue });
    }
    await this.sweep();
    const every = Math.max(50, Math.floor(this.workerTtlMs / 3));
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
    for (const workerId of this.held.keys()) {
      try {
        await this.script("recover", "return its processing list", ["own", workerId, this.lostTail]);
      } catch (error) {
        // Not lost: the heartbeat key expires and another worker returns the list.
        this.options.logger?.warn("could not return this worker's processing list at shutdown; another worker will", { error, worker_id: workerId });
      }
    }
    this.held.clear();
    this.closed = true;
    await this.redis.quit().catch(() => this.redis.disconnect(false));
  }

  async enqueue({ jobs }: { jobs: Job[] }): Promise<EnqueueResult> {
    if (jobs.length === 0) return { inserted: [] };
    if (hasUnique(jobs)) return this.enqueueUnique(jobs);
    // A limited task's job is never handed over in process: only the claim may start it.
    if (this.offers.size > 0 && jobs.length <= HAND_OFF_MAX_BATCH && !this.anyLimited(jobs)) {
      const handedOff = await this.enqueueHandingOff(jobs);
      if (handedOff) return handedOff;
    }
    const args: Array<string | number> = [];
    for (const job of jobs) {
      const json = job.toJSON();
      args.push(json.id, JSON.stringify(json), json.attempts, JSON.stringify(json.errors), job.availableAt.getTime(), json.maxAttempts ?? 0);
    }
    const inserted = (await this.script("enqueue", "enqueue", args, this.replicaWait)) as string[];
    const now = Date.now();
    const earliest = Math.min(...jobs.map((j) => j.availableAt.getTime()));
    if (inserted.length > 0 && earliest > now) await this.announce(earliest);
    return { inserted };
  }

  /** A batch with a unique job (enqueue-unique.lua): never handed over in process, so a duplicate never runs. */
  private async enqueueUnique(jobs: Job[]): Promise<EnqueueResult> {
    const args: Array<string | number> = [this.keys.uniquePrefix];
    for (const job of jobs) {
      const json = job.toJSON();
      const unique = job.unique;
      args.push(json.id, JSON.stringify(json), json.attempts, JSON.stringify(json.errors), job.availableAt.getTime(), json.maxAttempts ?? 0);
      args.push(unique ? scopedUniqueKey(job) : "", unique?.periodMs ?? 0, unique?.states?.join(",") ?? "");
    }
    const [inserted, pairs] = (await this.script("enqueue-unique", "enqueue", args, this.replicaWait)) as [string[], string[]];
    const earliest = Math.min(...jobs.map((j) => j.availableAt.getTime()));
    if (inserted.length > 0 && earliest > Date.now()) await this.announce(earliest);
    if (pairs.length === 0) return { inserted };
    const duplicates = new Map<string, string>();
    for (let i = 0; i < pairs.length; i += 2) duplicates.set(pairs[i]!, pairs[i + 1]!);
    return { inserted, duplicates };
  }

  private anyLimited(jobs: readonly Job[]): boolean {
    if (this.limitedSet.size === 0) return false;
    for (let i = 0; i < jobs.length; i++) if (this.limitedSet.has(jobs[i]!.task)) return true;
    return false;
  }

  /** Writes the limits hash whole (every process declares the same); claim.lua reads it. */
  async setLimits({ limits }: { limits: LimitMap }): Promise<void> {
    const fields: string[] = [];
    for (const [task, l] of limits) fields.push(task, `${l.concurrency ?? ""}|${l.rateLimit?.max ?? ""}|${l.rateLimit?.perMs ?? ""}`);
    await this.guard("declare task limits", () => {
      const multi = this.redis.multi().del(this.keys.limits);
      if (fields.length > 0) multi.hset(this.keys.limits, ...fields);
      return multi.exec();
    });
    this.limitedTasks = [...limits.keys()];
    this.limitedSet = new Set(this.limitedTasks);
  }

  async limitUsage({ task }: { task: string }): Promise<LimitUsage> {
    const now = Date.now();
    const holders = await this.guard("read task limits", () => this.redis.smembers(`${this.keys.limitPrefix}holders:${task}`));
    let running = 0;
    for (const id of holders) {
      const [state, lease] = await this.guard("read task limits", () => this.redis.hmget(this.keys.job(id), "state", "lease"));
      if (state === "running" && Number(lease) >= now) running++;
    }
    const limit = await this.guard("read task limits", () => this.redis.hget(this.keys.limits, task));
    const perMs = Number(limit?.split("|")[2] || 0);
    const startedInWindow = perMs > 0 ? await this.guard("read task limits", () => this.redis.zcount(`${this.keys.limitPrefix}starts:${task}`, `(${now - perMs}`, "+inf")) : 0;
    return { running, startedInWindow };
  }

  offerSlots(offer: SlotOffer): () => void {
    this.offers.add(offer);
    return () => this.offers.delete(offer);
  }

  /**
   * An idle worker of this process waits: the due jobs of the batch (up to its free slots) are stored already
   * claimed by it and handed over in memory once Redis answers, the rest stored ready as usual
   * (enqueue-hand-off.lua). null when no worker has a free slot for a due job: the plain enqueue runs instead.
   */
  private async enqueueHandingOff(jobs: Job[]): Promise<EnqueueResult | null> {
    // A worker that never claimed here has not had its earlier processing list returned yet (claim does that).
    const { handedTo, reserved } = reserveSlots(this.offers, jobs, Date.now(), (offer) => this.held.has(offer.workerId));
    if (reserved.size === 0) return null;
    const args: Array<string | number> = [this.workerTtlMs, this.keys.paused];
    // Ids this call put in a worker's held set, and only those: an id given again while its job runs is held
    // already, and must stay so.
    const marked = new Set<number>();
    for (let i = 0; i < jobs.length; i++) {
      const job = jobs[i]!;
      const json = job.toJSON();
      const offer = handedTo[i];
      args.push(json.id, JSON.stringify(json), json.attempts, JSON.stringify(json.errors), job.availableAt.getTime(), json.maxAttempts ?? 0);
      args.push(offer?.workerId ?? "", offer?.leaseMs ?? 0);
      // Held before the script is sent: a claim of this worker sent after it must not deliver these ids again
      // as jobs whose claim reply was lost (claim.lua), since they come to the worker from here.
      const held = offer ? this.held.get(offer.workerId)! : null;
      if (held && !held.has(job.id)) {
        held.add(job.id);
        marked.add(i);
      }
    }
    let inserted: string[];
    let handed: Set<number>;
    try {
      const [ids, positions] = (await this.script("enqueue-hand-off", "enqueue", args, this.replicaWait)) as [string[], number[]];
      inserted = ids;
      handed = new Set(positions.map((position) => position - 1));
    } catch (error) {
      // If the script did run and only its reply was lost, the jobs sit in the worker's processing list, not
      // held: its next claim hands them out (attempt counted once), as for any claim whose reply was lost.
      for (const i of marked) this.held.get(handedTo[i]!.workerId)?.delete(jobs[i]!.id);
      for (const [offer, count] of reserved) offer.cancel(count);
      throw error;
    }
    for (const [offer, count] of reserved) {
      const held = this.held.get(offer.workerId);
      const claimed: Job[] = [];
      for (let i = 0; i < jobs.length; i++) {
        if (handedTo[i] !== offer || !handed.has(i)) continue;
        // A claim answered meanwhile may have dropped the id from the held set before the script ran.
        held?.add(jobs[i]!.id);
        claimed.push(claimedCopy(jobs[i]!));
      }
      // Marked for this worker but stored ready (or not at all: the id existed): not this worker's to hold.
      const kept = new Set(claimed.map((job) => job.id));
      for (const i of marked) if (handedTo[i] === offer && !kept.has(jobs[i]!.id)) held?.delete(jobs[i]!.id);
      if (claimed.length > 0) offer.deliver(claimed, count);
      else offer.cancel(count);
    }
    const earliest = Math.min(...jobs.map((j) => j.availableAt.getTime()));
    if (inserted.length > 0 && earliest > Date.now()) await this.announce(earliest);
    return { inserted };
  }

  async claim({ workerId, limit, leaseMs, startable = limit }: ClaimParams): Promise<Job[]> {
    if (limit <= 0) return [];
    let held = this.held.get(workerId);
    if (!held) {
      // First use of this id by this process: whatever a previous process left under it comes back first.
      await this.script("recover", "return its processing list", ["own", workerId, this.lostTail]);
      held = new Set();
      this.held.set(workerId, held);
    }
    const [rows, notes, processing] = (await this.script("claim", "claim", [
      workerId,
      limit,
      leaseMs,
      this.workerTtlMs,
      this.lostTail,
      this.keys.paused,
      this.keys.parkedPrefix,
      this.limitedTasks.length > 0 ? this.keys.limits : "",
      this.keys.limitPrefix,
      Math.min(limit, startable),
      ...held,
    ])) as [Row[], Array<[string, string, string]>, string[]];
    for (const [kind, id, detail] of notes) {
      this.options.logger?.warn(
        kind === "unknown-id"
          ? `the ready list held an id with no job behind it; it was moved to dead letters as ${CorruptJob.task}`
          : kind === "no-state"
            ? `a stored job had no state field; it was moved to dead letters as ${CorruptJob.task}`
            : kind === "set-aside"
              ? `a stored job could not be read; it was moved to dead letters as ${CorruptJob.task}`
              : "dropped a second reference to a job from the ready list",
        { queue: this.options.queue, entry: id.slice(0, 200), ...(detail ? { [kind === "set-aside" ? "problem" : "state"]: detail } : {}) },
      );
    }
    const listed = new Set(processing);
    for (const id of held) if (!listed.has(id)) held.delete(id);
    const jobs: Job[] = [];
    for (const [id, ...fields] of rows) {
      const decoded = decodeJob(id, fields);
      let job: Job | null = null;
      let problem = "problem" in decoded ? decoded.problem : "";
      if ("job" in decoded) {
        try {
          job = Job.fromJSON(decoded.job);
        } catch (error) {
          problem = `the stored job cannot be rebuilt: ${(error as Error).message}`;
        }
      }
      if (job) {
        held.add(id);
        jobs.push(job);
        continue;
      }
      await this.script("quarantine", "set aside a corrupt job", [workerId, id, problem]);
      this.options.logger?.warn(`a stored job could not be read; it was moved to dead letters as ${CorruptJob.task}`, { queue: this.options.queue, job_id: id, problem });
    }
    return jobs;
  }

  leaseExtender(): LeaseExtenderSpec {
    const { url, cluster, queue, prefix } = this.options;
    const options = { url, queue, workerTtlMs: this.workerTtlMs, ...(cluster ? { cluster } : {}), ...(prefix ? { prefix } : {}) };
    return { module: siblingModule(import.meta.url, "lease-extender"), options };
  }

  async extendLeases({ workerId, jobIds, leaseMs }: { workerId: string; jobIds: string[]; leaseMs: number }): Promise<LeaseReport> {
    const cancelled = (await this.script("extend", "extend leases", [workerId, leaseMs, this.workerTtlMs, ...jobIds])) as string[];
    const held = this.held.get(workerId);
    for (const id of cancelled) held?.delete(id);
    return { cancelled };
  }

  complete({ workerId, job }: { workerId: string; job: Job }): Promise<void> {
    return this.completions.add(job.id, workerId);
  }

  async retry(params: { workerId: string; job: Job; error: AttemptError; availableAt: Date }): Promise<void> {
    const { workerId, job, error, availableAt } = params;
    await this.script("retry", "schedule a retry", [workerId, job.id, JSON.stringify(error), availableAt.getTime()]);
    this.held.get(workerId)?.delete(job.id);
    if (availableAt.getTime() > Date.now()) await this.announce(availableAt.getTime());
  }

  async kill(params: { workerId: string; job: Job; error: AttemptError }): Promise<void> {
    const { workerId, job, error } = params;
    await this.script("kill", "dead-letter a job", [workerId, job.id, JSON.stringify(error)]);
    this.held.get(workerId)?.delete(job.id);
  }

  async release({ workerId, jobs, availableAt }: { workerId: string; jobs: Job[]; availableAt?: Date }): Promise<void> {
    if (jobs.length === 0) return;
    await this.script("release", "release jobs", [workerId, availableAt?.getTime() ?? 0, ...jobs.map((j) => j.id)]);
    const held = this.held.get(workerId);
    for (const job of jobs) held?.delete(job.id);
  }

  async snooze({ workerId, job, availableAt, maxSnoozes }: SnoozeParams): Promise<{ snoozed: boolean }> {
    const done = await this.script("snooze", "snooze a job", [workerId, job.id, availableAt.getTime(), maxSnoozes]);
    if (done !== 1) return { snoozed: false };
    this.held.get(workerId)?.delete(job.id);
    if (availableAt.getTime() > Date.now()) await this.announce(availableAt.getTime());
    return { snoozed: true };
  }

  /**
   * A cancelled job's hash is kept as long as a completed one's, and at least an hour: its worker (if it ran) must
   * still find it at its next heartbeat, and getJob shows it meanwhile.
   */
  async cancel({ id }: { id: string }): Promise<CancelResult> {
    const keep = this.cancelledRetentionMs === 0 ? 0 : Math.max(this.cancelledRetentionMs, 60 * 60 * 1000);
    const [cancelled, state] = (await this.script("cancel", "cancel a job", [id, keep, this.keys.parkedPrefix, this.keys.cancelled])) as [number, string];
    return { cancelled: cancelled === 1, state: state === "" ? null : (state as JobState) };
  }

  async waitForWork({ signal, timeoutMs }: { signal: AbortSignal; timeoutMs: number }): Promise<void> {
    if (signal.aborted || this.closed || this.closing) return;
    this.listen();
    // Promote what is due, and learn when the next delayed job or lease comes due: block no longer than that.
    const [readyLength, nextDue, nextLease] = (await this.script("promote", "look for work", [])) as [number, string, string];
    if (readyLength > 0) return;
    const now = Date.now();
    let waitMs = this.limitedTasks.length > 0 ? Math.min(timeoutMs, LIMIT_RECHECK_MS) : timeoutMs;
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

  async listDead({ limit, offset = 0 }: { limit: number; offset?: number }): Promise<DeadJob[]> {
    const rows = (await this.script("list-dead", "list dead letters", [offset, limit])) as Array<[string, string, ...StoredFields]>;
    return rows.map(([id, diedAt, ...fields]) => {
      const job = decodeJobForDisplay(id, fields);
      return { job, diedAt: msToIso(diedAt) ?? new Date(0).toISOString(), lastError: job.errors.at(-1) ?? null };
    });
  }

  async retryDead(params: RetryDeadParams): Promise<{ retried: string[]; missing: string[] }> {
    const [retried, missing] = await this.deadBatches("retry-dead", "retry dead letters", params);
    return { retried, missing };
  }

  async prune({ state, select, limit }: PruneParams): Promise<number> {
    const set = state === RetainedState.completed ? this.keys.completed : state === RetainedState.dead ? this.keys.dead : this.keys.cancelled;
    const [mode, value] = "before" in select ? ["before", select.before.getTime()] : ["keep", select.keepNewest];
    return Number(await this.script("prune", "prune finished jobs", [set, mode, value, limit]));
  }

  async claimPruner({ owner, ttlMs }: { owner: string; ttlMs: number }): Promise<boolean> {
    return Number(await this.script("claim-pruner", "claim the pruner", [this.keys.pruner, owner, Math.max(1, Math.round(ttlMs))])) === 1;
  }

  async releasePruner({ owner }: { owner: string }): Promise<void> {
    await this.script("release-pruner", "release the pruner", [this.keys.pruner, owner]);
  }

  async discardDead(params: RetryDeadParams): Promise<{ discarded: string[]; missing: string[] }> {
    const [discarded, missing] = await this.deadBatches("discard-dead", "discard dead letters", params);
    return { discarded, missing };
  }

  async depths(): Promise<Depths> {
    const now = Date.now();
    const { keys } = this;
    const results = await this.guard("read depths", () =>
      keys.readyLists
        .reduce((multi, list) => multi.llen(list), this.redis.multi())
        .zcount(keys.scheduled, "-inf", now)
        .zcount(keys.scheduled, `(${now}`, "+inf")
        .zcard(keys.running)
        .zcard(keys.dead)
        .hkeys(keys.paused)
        .exec(),
    );
    const paused = (results?.[keys.readyLists.length + 4]?.[1] as string[] | undefined) ?? [];
    // A paused task's jobs set aside by the claim are still waiting: ready; so are a limited task's over its limit.
    const pausedTasks = this.limitedTasks.length === 0 ? paused : [...new Set([...paused, ...this.limitedTasks])];
    const parked = pausedTasks.length === 0 ? [] : await this.guard("read depths", () => Promise.all(pausedTasks.map((task) => this.redis.llen(keys.parked(task)))));
    const lists = keys.readyLists.length;
    const values = (results ?? []).slice(0, lists + 4).map(([error, value]) => {
      if (error) throw translateRedisError(error, { operation: "read depths", url: this.options.url, queue: this.options.queue });
      return Number(value);
    });
    const ready = values.slice(0, lists).reduce((sum, n) => sum + n, 0);
    const [dueScheduled = 0, scheduled = 0, running = 0, dead = 0] = values.slice(lists);
    // A delayed job whose time has come counts as ready even before a claim promotes it.
    return { ready: ready + dueScheduled + parked.reduce((sum, n) => sum + n, 0), scheduled, running, dead };
  }

  /**
   * Per task from a sample of at most TASK_SAMPLE jobs per structure (depths-by-task.lua), scaled to the
   * structure's size: exact while every structure is that small, an estimate beyond.
   */
  async depthsByTask(params: { tenantId?: string | undefined } = {}): Promise<TaskDepths> {
    const rows = (await this.script("depths-by-task", "count depths per task", [
      TASK_SAMPLE,
      params.tenantId ?? "",
      this.keys.paused,
      this.keys.parkedPrefix,
    ])) as Array<[keyof Depths, number, number, number, Array<string | number>]>;
    const tasks: Record<string, Depths> = {};
    let exact = true;
    for (const [state, size, read, jobs, flat] of rows) {
      if (read < size) exact = false;
      const scale = jobs > 0 && read < size ? size / jobs : 1;
      for (let i = 0; i < flat.length; i += 2) {
        const depths = (tasks[String(flat[i])] ??= { ready: 0, scheduled: 0, running: 0, dead: 0 });
        depths[state] += Math.round(Number(flat[i + 1]) * scale);
      }
    }
    return { tasks, exact };
  }

  /** `jfast keys rotate`: waiting jobs and dead letters re-encrypted in place (core/stored-rewrite.ts). */
  rewriteStored(params: { rewrite(parts: StoredParts): StoredParts | null }): Promise<StoredRewriteResult> {
    return this.guard("rewrite stored jobs", () =>
      rewriteStoredJobs({ redis: this.redis, keys: this.keys, rewrite: params.rewrite, write: (args) => this.script("rewrite", "rewrite a job", args) }),
    );
  }

  async getJob({ id }: { id: string }): Promise<JobInfo | null> {
    const hash = await this.guard("read a job", () => this.redis.hgetall(this.keys.job(id)));
    if (!hash.json && !hash.state) return null;
    const job = decodeJobForDisplay(id, [hash.json ?? null, hash.attempts ?? null, hash.errors ?? null, hash.available_at ?? null]);
    const state = (Object.values(JobState) as string[]).includes(hash.state ?? "") ? (hash.state as JobState) : JobState.ready;
    return {
      job,
      state,
      lockedBy: state === JobState.running || state === JobState.cancelled ? (hash.owner ?? null) : null,
      lockedUntil: state === JobState.running ? msToIso(hash.lease) : null,
      diedAt: state === JobState.dead ? msToIso(hash.died_at) : null,
    };
  }

  /** From each state's list or sorted set, a bounded window per page (listing.ts). */
  async listJobs(params: ListJobsParams): Promise<JobListing> {
    if (params.id !== undefined) return listById((p) => this.getJob(p), { ...params, id: params.id });
    return this.guard("list jobs", () => listRedisJobs(this.redis, this.keys, params));
  }

  async runNow({ id }: { id: string }): Promise<JobActionResult> {
    const [done, state] = (await this.script("run-now", "run a job now", [id])) as [number, string];
    return { done: done === 1, state: state === "" ? null : (state as JobState) };
  }

  async deleteJob({ id }: { id: string }): Promise<JobActionResult> {
    const [done, state] = (await this.script("delete-job", "delete a job", [id, this.keys.parkedPrefix])) as [number, string];
    return { done: done === 1, state: state === "" ? null : (state as JobState) };
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

  /** No payload index: the admin API reads a bounded number of dead letters instead (docs/admin-api.md#job-search). */
  async searchDead(): Promise<{ rows: DeadJob[]; next: string | null }> {
    throw new NotSupportedError("the Redis queue keeps no index of dead letters' payloads", {
      hint: "search by payload reads the newest dead letters instead; the PostgreSQL queue answers it through an index",
      docs: "jfast docs admin-api#job-search",
    });
  }

  /** Per-minute throughput counts in this queue's keys, expiring after 7 days (throughput-store.ts). */
  throughputStore(): ThroughputStore {
    return createRedisThroughputStore({ keys: this.keys, guard: (operation, fn) => this.guard(operation, () => fn(this.redis)) });
  }

  /** Returns the processing lists of workers whose heartbeat expired. Runs on setup and on the heartbeat timer. */
  async sweep(): Promise<{ jobs: number; workers: number }> {
    const [jobs, workers] = (await this.script("recover", "recover the jobs of vanished workers", ["stale", MAX_WORKERS_PER_SWEEP, this.lostTail])) as [number, number];
    if (workers > 0) this.options.logger?.warn("returned the jobs of workers that stopped heartbeating", { queue: this.options.queue, workers, jobs });
    return { jobs, workers };
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
      if (this.held.size > 0) {
        const pipeline = this.redis.pipeline();
        for (const workerId of this.held.keys()) {
          pipeline.set(this.keys.worker(workerId), now, "PX", this.workerTtlMs);
          pipeline.zadd(this.keys.workers, now, workerId);
        }
        await pipeline.exec();
      }
      await this.sweep();
    } catch (error) {
      this.options.logger?.warn("Redis queue heartbeat failed; retrying", { error: (error as Error).message });
    }
  }

  private async deadBatches(name: "retry-dead" | "discard-dead", operation: string, params: RetryDeadParams): Promise<[string[], string[]]> {
    if (!("all" in params)) {
      if (params.ids.length === 0) return [[], []];
      return (await this.script(name, operation, ["ids", 0, ...params.ids])) as [string[], string[]];
    }
    const done: string[] = [];
    for (;;) {
      const [batch, dangling] = (await this.script(name, operation, ["all", DEAD_BATCH])) as [string[], string[]];
      done.push(...batch);
      if (batch.length + dangling.length < DEAD_BATCH) return [done, []];
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
    return (this.redis as Cluster).slots[this.slot]?.[0] ?? "";
  }

  /**
   * Cluster: a plain connection to the primary serving the queue's slot, for the blocking wait (ready-waiter.ts).
   * Before the client knows the slot's node, the first seed: a wrong node answers MOVED and the worker waits again.
   */
  private connectToSlotNode(): Redis {
    const known = this.slotNode();
    const node = known ? splitNodeKey(known) : parseRedisUrl(this.options.url).nodes[0]!;
    return openNodeConnection({ url: this.options.url, node, queue: this.options.queue, onError: () => undefined });
  }

  /** CLIENT UNBLOCK on the node the blocked connection is connected to (standalone: the only one). */
  private async unblock(clientId: number, blocked: Redis): Promise<unknown> {
    if (!this.options.cluster) return (this.redis as Redis).client("UNBLOCK", clientId);
    const target = `${blocked.options.host}:${blocked.options.port}`;
    const node = (this.redis as Cluster).nodes("master").find((n) => `${n.options.host}:${n.options.port}` === target);
    return node?.client("UNBLOCK", clientId);
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

/** ioredis names a Cluster node "host:port" (the host may be an IPv6 address with colons of its own). */
function splitNodeKey(key: string): { host: string; port: number } {
  const colon = key.lastIndexOf(":");
  return { host: key.slice(0, colon), port: Number(key.slice(colon + 1)) };
}

export function createRedisBackend(options: RedisBackendOptions): RedisBackend {
  return new RedisBackend(options);
}
