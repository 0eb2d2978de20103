import type { Worker as Thread } from "node:worker_threads";
import { siblingModule, type LeaseExtenderSpec } from "../../core/lease-extender.js";
import type { Logger } from "../../observability/logger.js";
import { now, type FromHeartbeatThread, type ToHeartbeatThread } from "./messages.js";
import { startThread } from "./start-thread.js";

/**
 * A worker's side of the heartbeat thread (heartbeat-thread.ts, docs/worker.md#a-blocked-event-loop-does-not-lose-the-lease): one thread per process,
 * shared by every worker, started with the first and ended with the last. The worker tells it which jobs it holds
 * (at each claim and after each beat of its own); the thread keeps their leases while the worker cannot.
 */
export interface HeartbeatBackstop {
  /**
   * Settles once the thread has its connection open and can keep leases (or could not open it, or failed): until
   * then a job that blocks the event loop could lose its lease, so a worker starts its first jobs after it.
   */
  readonly opened: Promise<void>;
  /** Jobs just claimed (or handed over): kept from now on. */
  hold(ids: readonly string[]): void;
  /** The worker's own heartbeat went through, for exactly the jobs it held at `heldAt` (now(), when it began). */
  beat(ids: readonly string[], heldAt: number): void;
  detach(): void;
}

interface Attached {
  key: string;
  /** This Worker object: the workers of a process (one per named queue) share a worker id. */
  worker: number;
  workerId: string;
  logger: Logger;
  onCancelled(ids: string[]): void;
  /** A stall is reported once, when the main thread is back. */
  reportedStall: boolean;
}

let thread: Thread | null = null;
const attached = new Set<Attached>();
/** Each connection asked of the thread, settled when it reports it open or failed (or the thread fails). */
const opened = new Map<string, { promise: Promise<void>; settle(): void }>();
let lastWorker = 0;

export function attachHeartbeatBackstop(params: {
  spec: LeaseExtenderSpec;
  workerId: string;
  leaseMs: number;
  logger: Logger;
  onCancelled(ids: string[]): void;
}): HeartbeatBackstop | null {
  const { spec, workerId, leaseMs, logger } = params;
  const key = `${spec.module}#${JSON.stringify(spec.options)}`;
  let current: Thread;
  try {
    current = threadForProcess();
  } catch (error) {
    logger.warn("the heartbeat thread could not start; leases are kept by the event loop alone", { error });
    return null;
  }
  let open = opened.get(key);
  if (!open) {
    let settle!: () => void;
    const promise = new Promise<void>((resolve) => (settle = resolve));
    open = { promise, settle };
    opened.set(key, open);
    send({ type: "open", key, spec });
  }
  const worker = ++lastWorker;
  const self: Attached = { key, worker, workerId, logger, onCancelled: params.onCancelled, reportedStall: false };
  attached.add(self);
  const at = now();
  send({ type: "beat", key, worker, workerId, leaseMs, ids: [], heldAt: at, at });
  return {
    opened: open.promise,
    hold(ids) {
      if (ids.length > 0) send({ type: "hold", key, worker, workerId, leaseMs, ids: [...ids], at: now() });
    },
    beat(ids, heldAt) {
      self.reportedStall = false;
      send({ type: "beat", key, worker, workerId, leaseMs, ids: [...ids], heldAt, at: now() });
    },
    detach() {
      if (!attached.delete(self)) return;
      send({ type: "forget", key, worker });
      if (attached.size === 0 && thread === current) {
        thread = null;
        settleAll();
        void current.terminate();
      }
    },
  };
}

function threadForProcess(): Thread {
  if (thread) return thread;
  const started = startThread(siblingModule(import.meta.url, "heartbeat-thread"), { name: "jfast heartbeat" });
  // The thread never keeps the process alive: a worker that stops detaches, and a process may exit without.
  started.unref();
  started.on("message", (message: FromHeartbeatThread) => receive(message));
  started.on("error", (error) => {
    for (const a of attached) a.logger.error("the heartbeat thread failed; leases are kept by the event loop alone", { error });
    if (thread === started) {
      thread = null;
      settleAll();
    }
  });
  thread = started;
  return started;
}

function send(message: ToHeartbeatThread): void {
  thread?.postMessage(message);
}

/** No connection is awaited any more (the thread ended or failed): whoever waits goes on. */
function settleAll(): void {
  for (const open of opened.values()) open.settle();
  opened.clear();
}

function receive(message: FromHeartbeatThread): void {
  if (message.type === "opened" || (message.type === "failed" && message.worker === null)) opened.get(message.key)?.settle();
  if (message.type === "opened") return;
  for (const a of attached) {
    if (a.key !== message.key || (message.worker !== null && a.worker !== message.worker)) continue;
    if (message.type === "failed") {
      a.logger.warn("the heartbeat thread could not extend leases", { error: message.message });
      continue;
    }
    if (!a.reportedStall) {
      a.reportedStall = true;
      a.logger.warn("the event loop was blocked; the heartbeat thread kept the leases of this worker's jobs", {
        blocked_ms: message.silentMs,
        jobs: message.ids.length,
        docs: "jfast docs worker#a-blocked-event-loop-does-not-lose-the-lease",
      });
    }
    if (message.cancelled.length > 0) a.onCancelled(message.cancelled);
  }
}
