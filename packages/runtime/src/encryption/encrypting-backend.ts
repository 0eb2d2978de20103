import type { AttemptError, Job } from "../core/job.js";
import type { ClaimParams, QueueBackend, SlotOffer } from "../core/queue-backend.js";
import type { Logger } from "../observability/logger.js";
import { DecryptionError } from "../core/crypto/envelope.js";
import { isSealedJob, openError, sealError } from "../core/crypto/sealed-job.js";
import { decryptValue, encryptValue } from "../core/crypto/envelope.js";
import type { JobEncryption } from "./job-encryption.js";

/** The reason recorded on a job killed at claim because no key opens it (never retried blindly). */
export const UNREADABLE_REASON = "encryption key unavailable";

/**
 * The QueueBackend every worker and enqueue of the service goes through when it has encryption keys: enqueue
 * seals the payloads of encrypted tasks, claim opens them before the worker sees the job, retry and kill seal the
 * error's message and stack. Admin reads (listDead, getJob, listJobs, searchDead) pass through sealed: the admin
 * API decides who sees what (admin/sealed-redaction.ts). Jobs keep their identity (a backend may know its claimed
 * jobs by object, RabbitMQ's deliveries), so the plaintext is put into the claimed Job itself.
 */
export function withEncryption(backend: QueueBackend, encryption: JobEncryption, logger: Logger): QueueBackend {
  /** Claimed jobs that held anything sealed: their errors are sealed too, whatever their task says now. */
  const sealed = new WeakSet<Job>();
  const sealsErrorsOf = (job: Job) => sealed.has(job) || encryption.encrypts(job.task);
  const keyring = encryption.keyring;

  /** Runs `write` with the jobs of encrypted tasks sealed in place, then gives the caller its plaintext back. */
  async function sealedWhile<T>(jobs: readonly Job[], write: () => Promise<T>): Promise<T> {
    const restore: Array<() => void> = [];
    for (const job of jobs) {
      if (!encryption.encrypts(job.task)) continue;
      const { payload, errors, unique } = job;
      const stored = encryption.storedJSON(job);
      const writable = job as { payload: unknown; errors: AttemptError[]; unique: Job["unique"] };
      writable.payload = stored.payload;
      writable.errors = stored.errors;
      writable.unique = stored.unique ?? null;
      restore.push(() => {
        writable.payload = payload;
        writable.errors = errors;
        writable.unique = unique;
      });
    }
    try {
      return await write();
    } finally {
      for (const undo of restore) undo();
    }
  }

  /** Opens claimed jobs in place; those no key opens come back in `unreadable` with why. */
  function open(jobs: readonly Job[]): { readable: Job[]; unreadable: Array<{ job: Job; error: DecryptionError }> } {
    const readable: Job[] = [];
    const unreadable: Array<{ job: Job; error: DecryptionError }> = [];
    for (const job of jobs) {
      if (!isSealedJob(job)) {
        readable.push(job);
        continue;
      }
      try {
        const payload = decryptValue(job.payload, keyring);
        const errors = job.errors.map((e) => openError(e, keyring));
        const writable = job as { payload: unknown; errors: AttemptError[] };
        writable.payload = payload;
        writable.errors = errors;
        sealed.add(job);
        readable.push(job);
      } catch (error) {
        if (!(error instanceof DecryptionError)) throw error;
        unreadable.push({ job, error });
      }
    }
    return { readable, unreadable };
  }

  /** Dead at once with the key id in its reason: retrying cannot help until the key is back. */
  async function bury(workerId: string, unreadable: ReadonlyArray<{ job: Job; error: DecryptionError }>): Promise<void> {
    for (const { job, error } of unreadable) {
      logger.error("job cannot be decrypted: dead-lettered", { job_id: job.id, task: job.task, kid: error.kid, code: error.code });
      const attempt: AttemptError = {
        attempt: job.attempts,
        at: new Date().toISOString(),
        class: error.name,
        message: error.message.split("\n")[0]!,
        reason: `${UNREADABLE_REASON}: key "${error.kid}"`,
      };
      await backend.kill({ workerId, job, error: attempt });
    }
  }

  const overrides: Partial<QueueBackend> = {
    enqueue: (params) => sealedWhile(params.jobs, () => backend.enqueue(params)),
    // A flow's steps, and the steps a running step spawns, are stored as jobs are: sealed for an encrypted task.
    enqueueFlow: (params) => sealedWhile(params.flow.steps.map((s) => s.job), () => backend.enqueueFlow(params)),
    complete: (params) => (params.spawn ? sealedWhile(params.spawn.map((s) => s.job), () => backend.complete(params)) : backend.complete(params)),
    async claim(params: ClaimParams) {
      const { readable, unreadable } = open(await backend.claim(params));
      if (unreadable.length > 0) await bury(params.workerId, unreadable);
      return readable;
    },
    // An edited payload (jobs.update) is stored as an enqueued one: sealed when its task encrypts.
    updateJob: (params) =>
      params.payload !== undefined && keyring && encryption.encrypts(params.task)
        ? backend.updateJob({ ...params, payload: encryptValue(params.payload, keyring) })
        : backend.updateJob(params),
    retry: (params) => backend.retry(sealsErrorsOf(params.job) && keyring ? { ...params, error: sealError(params.error, keyring) } : params),
    kill: (params) => backend.kill(sealsErrorsOf(params.job) && keyring ? { ...params, error: sealError(params.error, keyring) } : params),
  };
  if (backend.capabilities.transactionalEnqueue) {
    overrides.enqueueWithin = (params) => sealedWhile(params.jobs, () => backend.enqueueWithin(params));
    overrides.enqueueFlowWithin = (params) => sealedWhile(params.flow.steps.map((s) => s.job), () => backend.enqueueFlowWithin(params));
  }
  if (backend.capabilities.handOff) {
    overrides.offerSlots = (offer: SlotOffer) =>
      backend.offerSlots({
        get workerId() {
          return offer.workerId;
        },
        get leaseMs() {
          return offer.leaseMs;
        },
        pausedTasks: () => offer.pausedTasks(),
        reserve: (wanted) => offer.reserve(wanted),
        cancel: (reserved) => offer.cancel(reserved),
        deliver(jobs, reserved) {
          const { readable, unreadable } = open(jobs);
          offer.deliver(readable, reserved);
          if (unreadable.length > 0) {
            bury(offer.workerId, unreadable).catch((error: unknown) => logger.error("dead-lettering an unreadable job failed", { error }));
          }
        },
      });
  }
  return new Proxy(backend, {
    get(target, property) {
      if (Object.prototype.hasOwnProperty.call(overrides, property)) return overrides[property as keyof typeof overrides];
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
