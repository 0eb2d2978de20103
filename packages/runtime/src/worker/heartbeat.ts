import type { Job } from "../core/job.js";
import type { QueueBackend } from "../core/queue-backend.js";
import type { Logger } from "../observability/logger.js";
import { attachHeartbeatBackstop, type HeartbeatBackstop } from "./lease/heartbeat-backstop.js";
import { beatLateWorkers, registerLocalBeat, type LocalBeat } from "./lease/local-beats.js";
import { now } from "./lease/messages.js";

/** Jobs held between two lists of all held (see Heartbeat.hold). */
const RELIST_AFTER = 1000;

/**
 * A worker's heartbeat (docs/worker.md#leases-and-heartbeats): every third of the lease it extends the leases of
 * the jobs it holds and learns which were cancelled. With the heartbeat thread (lease/) it also keeps them while
 * the event loop is blocked (docs/worker.md#a-blocked-event-loop-does-not-lose-the-lease).
 */
export class Heartbeat {
  private timer: NodeJS.Timeout | null = null;
  /** Keeps the leases while the event loop is blocked; null for leases judged in this process. */
  private backstop: HeartbeatBackstop | null = null;
  private local: LocalBeat | null = null;
  private unregister: (() => void) | null = null;
  /** The beat in flight: a claim of this process waits for it rather than race it (lease/local-beats.ts). */
  private beating: Promise<void> | null = null;
  /** Jobs told to the heartbeat thread since it last had the whole list (a beat, or held()). */
  private toldSinceList = 0;

  constructor(
    private readonly params: {
      backend: QueueBackend;
      workerId: string;
      leaseMs: number;
      logger: Logger;
      /** The ids of the jobs the worker holds now. */
      held(): string[];
      /** Jobs cancelled through the queue while the worker held them. */
      cancelled(ids: string[]): void;
    },
  ) {}

  start(): void {
    const { backend, workerId, leaseMs, logger } = this.params;
    const every = Math.max(50, Math.floor(leaseMs / 3));
    this.timer = setInterval(() => void this.beat(), every);
    this.timer.unref();
    this.local = { lateAfterMs: every * 1.5, lastBeatAt: performance.now(), beat: () => this.beat() };
    this.unregister = registerLocalBeat(this.local);
    const spec = backend.capabilities.leaseThread ? backend.leaseExtender() : null;
    if (spec) this.backstop = attachHeartbeatBackstop({ spec, workerId, leaseMs, logger, onCancelled: (ids) => this.params.cancelled(ids) });
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.unregister?.();
    this.backstop?.detach();
  }

  /**
   * Jobs just claimed or handed over (not yet among `held()`): the heartbeat thread keeps them from now on. The
   * thread learns which jobs finished from the next list of all held; a fast worker holds many thousands between
   * two beats, so it gets that list every RELIST_AFTER jobs too, and the ids it keeps stay few.
   */
  hold(jobs: readonly Job[]): void {
    if (!this.backstop || jobs.length === 0) return;
    this.toldSinceList += jobs.length;
    if (this.toldSinceList > RELIST_AFTER) {
      this.toldSinceList = jobs.length;
      this.backstop.held(this.params.held());
    }
    this.backstop.hold(jobs.map((job) => job.id));
  }

  /** Lets the late heartbeats of this process's workers go first (before a claim). Null when none is late. */
  static beforeClaim(): Promise<void> | null {
    return beatLateWorkers();
  }

  private beat(): Promise<void> {
    this.beating ??= this.extend().finally(() => {
      this.beating = null;
      if (this.local) this.local.lastBeatAt = performance.now();
    });
    return this.beating;
  }

  private async extend(): Promise<void> {
    const heldAt = now();
    this.toldSinceList = 0;
    const ids = this.params.held();
    if (ids.length === 0) {
      this.backstop?.beat(ids, heldAt);
      return;
    }
    try {
      const { cancelled } = await this.params.backend.extendLeases({ workerId: this.params.workerId, jobIds: ids, leaseMs: this.params.leaseMs });
      this.backstop?.beat(cancelled.length > 0 ? ids.filter((id) => !cancelled.includes(id)) : ids, heldAt);
      if (cancelled.length > 0) this.params.cancelled(cancelled);
    } catch (error) {
      this.params.logger.warn("heartbeat failed", { error });
    }
  }
}
