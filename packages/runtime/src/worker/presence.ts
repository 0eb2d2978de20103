import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { WORKER_FORGET_AFTER_MS, WORKER_HEARTBEAT_MS, type WorkerRecord, type WorkerStore } from "../core/backend/workers.js";
import type { Logger } from "../observability/logger.js";

/** How often a worker writes its record and when a reader forgets it (docs/worker.md#the-worker-registry). */
export interface WorkerRegistryOptions {
  /** Default 10 s; a reader shows the worker as gone after 3 missed. */
  heartbeatMs?: number;
  /** Default 10 min after its last heartbeat. */
  forgetAfterMs?: number;
}

let version: string | null = null;
/** This package's version, read once (src/ and dist/ both sit two levels under package.json). */
function runtimeVersion(): string {
  if (version === null) {
    try {
      version = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version?: string }).version ?? "unknown";
    } catch {
      version = "unknown";
    }
  }
  return version;
}

/**
 * A worker's entry in the registry of the backend it consumes (core/backend/workers.ts): written when it starts and
 * then on a timer of its own, so no job's claim or outcome carries a registry write; removed when it stops cleanly.
 */
export class WorkerPresence {
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> | null = null;
  private startedAt = "";
  private failing = false;
  private readonly heartbeatMs: number;
  private readonly forgetAfterMs: number;

  constructor(
    private readonly params: {
      store: WorkerStore;
      workerId: string;
      queue: string;
      concurrency: number;
      logger: Logger;
      /** The jobs it runs now, each with when it started (epoch ms). */
      running(): Array<{ id: string; startedAt: number }>;
      options?: WorkerRegistryOptions | undefined;
    },
  ) {
    this.heartbeatMs = Math.max(10, params.options?.heartbeatMs ?? WORKER_HEARTBEAT_MS);
    this.forgetAfterMs = Math.max(this.heartbeatMs, params.options?.forgetAfterMs ?? WORKER_FORGET_AFTER_MS);
  }

  start(): void {
    if (this.timer) return;
    this.startedAt = new Date().toISOString();
    void this.beat();
    this.timer = setInterval(() => void this.beat(), this.heartbeatMs);
    this.timer.unref();
  }

  /** Stops the timer and removes the record (after a write in flight, so that write cannot bring it back). */
  async stop(): Promise<void> {
    if (!this.timer) return;
    clearInterval(this.timer);
    this.timer = null;
    await this.writing;
    await this.params.store.remove({ id: this.params.workerId }).catch((error: unknown) => {
      this.params.logger.warn("could not leave the worker registry; the worker shows as gone until it is forgotten", { error });
    });
  }

  private beat(): Promise<void> {
    // A write still in flight (a slow store) is not queued behind: the next tick writes the newer state.
    this.writing ??= this.write().finally(() => (this.writing = null));
    return this.writing;
  }

  private async write(): Promise<void> {
    const { store, workerId, queue, concurrency, logger } = this.params;
    const running = this.params.running();
    const record: WorkerRecord = {
      id: workerId,
      host: hostname(),
      pid: process.pid,
      version: runtimeVersion(),
      queue,
      concurrency,
      startedAt: this.startedAt,
      heartbeatAt: new Date().toISOString(),
      running: running.map((r) => r.id),
      runningSince: running.map((r) => new Date(r.startedAt).toISOString()),
      heartbeatMs: this.heartbeatMs,
      forgetAfterMs: this.forgetAfterMs,
    };
    try {
      await store.beat(record);
      this.failing = false;
    } catch (error) {
      // Once per run of failures: the store may be down for a while, and the jobs go on meanwhile.
      if (!this.failing) logger.warn("could not write the worker registry; retrying on the next heartbeat", { error });
      this.failing = true;
    }
  }
}
