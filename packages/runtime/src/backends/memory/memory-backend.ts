import type { AttemptError, Job } from "../../core/job.js";
import type { LeaseExtenderSpec } from "../../core/lease-extender.js";
import type { JobProgress } from "../../core/job-life.js";
import type { LimitMap, LimitUsage } from "../../core/limits.js";
import type { PauseStore } from "../../core/pause.js";
import {
  BackendKind,
  notSupported,
  type CancelResult,
  type ClaimParams,
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
import type { StoredResult } from "../../core/result.js";
import type { StoredParts, StoredRewriteResult } from "../../core/stored-rewrite.js";
import type { BlockedKey } from "../../core/backend/admin.js";
import * as blocked from "./blocked-keys.js";
import type { ThroughputStore } from "../../core/throughput.js";
import { flowWithinRefused, type FlowDetail, type FlowSummary, type ListFlowsParams } from "../../core/backend/flows.js";
import type { FlowPlan, ParentOutcome } from "../../core/flow.js";
import { createMemoryWorkerStore, type WorkerStore } from "../../core/backend/workers.js";
import * as admin from "./admin.js";
import * as deadlines from "./deadlines.js";
import { enqueueDebounced } from "./debounce.js";
import { hasDebounce } from "../../core/debounce.js";
import * as flows from "./flows.js";
import { capabilities } from "./capabilities.js";
import { claim, waitForWork } from "./claim.js";
import { enqueue } from "./enqueue.js";
import * as maintenance from "./maintenance.js";
import * as outcomes from "./outcomes.js";
import { MemoryStore } from "./store.js";

/**
 * In-process queue with the same protocol as the others: leases, attempts counted at claim, worker-lost
 * accounting, dead letters. Nothing survives the process; for tests and single-process use. The state is one
 * MemoryStore (store.ts); each operation is a function of it, one file per role.
 */
export class MemoryBackend implements QueueBackend {
  readonly kind = BackendKind.memory;
  readonly capabilities = capabilities;
  private readonly store = new MemoryStore();
  private readonly workers = createMemoryWorkerStore();

  async setup(): Promise<void> {}

  async close(): Promise<void> {
    this.store.closed = true;
    this.store.wake();
  }

  async enqueue(params: { jobs: Job[] }): Promise<EnqueueResult> {
    if (hasDebounce(params.jobs)) return enqueueDebounced(this.store, params.jobs, enqueue);
    return enqueue(this.store, params);
  }

  async enqueueWithin(): Promise<EnqueueResult> {
    throw notSupported("transactionalEnqueue", "the memory queue cannot write jobs in a SQL transaction", {
      hint: "outbox.enqueue writes a jfast_outbox row in the transaction instead, moved by the relay after commit",
    });
  }

  async claim(params: ClaimParams): Promise<Job[]> {
    return claim(this.store, params);
  }

  waitForWork(params: { signal: AbortSignal; timeoutMs: number; pausedTasks?: readonly string[] }): Promise<void> {
    return waitForWork(this.store, params);
  }

  offerSlots(): () => void {
    throw notSupported("handOff", "the memory queue hands no job over in process: its claim is already in memory");
  }

  leaseExtender(): LeaseExtenderSpec {
    throw notSupported("leaseThread", "the memory queue's leases live in this process; no other thread can extend them");
  }

  async extendLeases(params: { workerId: string; jobIds: string[]; leaseMs: number }): Promise<LeaseReport> {
    return outcomes.extendLeases(this.store, params);
  }

  async complete(params: { workerId: string; job: Job; result?: StoredResult | undefined }): Promise<void> {
    outcomes.complete(this.store, params);
  }

  async retry(params: { workerId: string; job: Job; error: AttemptError; availableAt: Date }): Promise<void> {
    outcomes.retry(this.store, params);
  }

  async kill(params: { workerId: string; job: Job; error: AttemptError }): Promise<void> {
    outcomes.kill(this.store, params);
  }

  async expire(params: { workerId: string; job: Job; error: AttemptError }): Promise<void> {
    deadlines.expire(this.store, params);
  }

  async pruneKeys(params: { limit: number }): Promise<number> {
    return maintenance.pruneKeys(this.store, params);
  }

  async expireDue(params: { limit: number }): Promise<number> {
    return deadlines.expireDue(this.store, params);
  }

  async setProgress(params: { workerId: string; job: Job; progress: JobProgress }): Promise<void> {
    outcomes.setProgress(this.store, params);
  }

  async release(params: { workerId: string; jobs: Job[]; availableAt?: Date }): Promise<void> {
    outcomes.release(this.store, params);
  }

  async snooze(params: SnoozeParams): Promise<{ snoozed: boolean }> {
    return outcomes.snooze(this.store, params);
  }

  async cancel(params: { id: string }): Promise<CancelResult> {
    return outcomes.cancel(this.store, params);
  }

  async enqueueFlow(params: { flow: FlowPlan }): Promise<{ created: boolean }> {
    return flows.enqueueFlow(this.store, params);
  }

  async enqueueFlowWithin(): Promise<{ created: boolean }> {
    throw flowWithinRefused("the memory queue");
  }

  async parentOutcomes(params: { jobIds: readonly string[] }): Promise<Map<string, ParentOutcome>> {
    return flows.parentOutcomes(this.store, params);
  }

  async listFlows(params: ListFlowsParams): Promise<{ rows: FlowSummary[]; next: string | null }> {
    return flows.listFlows(this.store, params);
  }

  async getFlow(params: { id: string }): Promise<FlowDetail | null> {
    return flows.getFlow(this.store, params);
  }

  async cancelFlow(params: { id: string }): Promise<{ cancelled: string[] } | null> {
    return flows.cancelFlow(this.store, params);
  }

  async setLimits(params: { limits: LimitMap }): Promise<void> {
    maintenance.setLimits(this.store, params);
  }

  async limitUsage(params: { task: string }): Promise<LimitUsage> {
    return maintenance.limitUsage(this.store, params);
  }

  async getJob(params: { id: string }): Promise<JobInfo | null> {
    return admin.getJob(this.store, params);
  }

  listJobs(params: ListJobsParams): Promise<JobListing> {
    return admin.listJobs(this.store, params);
  }

  async jobsByRequest(params: { requestId: string; limit: number }): Promise<RequestJob[]> {
    return admin.jobsByRequest(this.store, params);
  }

  async depths(): Promise<Depths> {
    return admin.depths(this.store);
  }

  async depthsByTask(params?: { tenantId?: string | undefined }): Promise<TaskDepths> {
    return admin.depthsByTask(this.store, params);
  }

  async listDead(params: { limit: number; offset?: number }): Promise<DeadJob[]> {
    return admin.listDead(this.store, params);
  }

  /** No payload index: the admin API reads a bounded number of dead letters instead (docs/admin-api.md#job-search). */
  async searchDead(): Promise<{ rows: DeadJob[]; next: string | null }> {
    throw notSupported("payloadIndex", "the memory queue keeps no index of dead letters' payloads", {
      hint: "search by payload reads the newest dead letters instead; the PostgreSQL queue answers it through an index",
    });
  }

  async retryDead(params: RetryDeadParams): Promise<{ retried: string[]; missing: string[] }> {
    return admin.retryDead(this.store, params);
  }

  async discardDead(params: RetryDeadParams): Promise<{ discarded: string[]; missing: string[] }> {
    return admin.discardDead(this.store, params);
  }

  async updateJob(params: JobUpdate): Promise<JobActionResult> {
    return admin.updateJob(this.store, params);
  }

  async runNow(params: { id: string }): Promise<JobActionResult> {
    return admin.runNow(this.store, params);
  }

  async deleteJob(params: { id: string }): Promise<JobActionResult> {
    return admin.deleteJob(this.store, params);
  }

  async rewriteStored(params: { rewrite(parts: StoredParts): StoredParts | null }): Promise<StoredRewriteResult> {
    return admin.rewriteStored(this.store, params);
  }

  async blockedKeys(params: { limit: number }): Promise<BlockedKey[]> {
    return blocked.blockedKeys(this.store, params);
  }

  async skipBlockedKey(params: { task: string; key: string }): Promise<{ skipped: string[] }> {
    return blocked.skipBlockedKey(this.store, params);
  }

  async prune(params: PruneParams): Promise<number> {
    return maintenance.prune(this.store, params);
  }

  async claimPruner(params: { owner: string; ttlMs: number }): Promise<boolean> {
    return maintenance.claimPruner(this.store, params);
  }

  async releasePruner(params: { owner: string }): Promise<void> {
    maintenance.releasePruner(this.store, params);
  }

  /** Kept by the service (core/pause.ts): a memory queue lives in one process. */
  pauseStore(): PauseStore {
    throw notSupported("pauseStore", "the memory queue keeps no store of paused tasks; the service keeps them in memory");
  }

  /** The service keeps throughput counts in its database, or in memory. */
  throughputStore(): ThroughputStore {
    throw notSupported("throughputStore", "the memory queue keeps no throughput counts; the service keeps them in its database or in memory");
  }

  /** The workers of this process (the only ones a memory queue has). */
  workerStore(): WorkerStore {
    return this.workers;
  }
}

export function createMemoryBackend(): MemoryBackend {
  return new MemoryBackend();
}
