import type { Worker as Thread } from "node:worker_threads";
import { siblingModule, type LeaseExtenderSpec } from "../../core/lease-extender.js";
import type { Logger } from "../../observability/logger.js";
import { now, type FromHeartbeatThread, type ToHeartbeatThread } from "./messages.js";
import { startThread } from "./start-thread.js";

/**
 * A worker's side of the heartbeat thread (heartbeat-thread.ts, docs/worker.md#a-blocked-event-loop-does-not-lose-the-lease): one thread per process,
 * shared by every worker, started with the first. When the last detaches, the thread closes its connections at
 * once and ends LINGER_MS later, unless a worker attaches before: a worker started again soon after (a restart
 * within the process, the next phase of a benchmark, a test's next case) reuses it rather than pay its start.
 * The worker tells it which jobs it holds (at each claim and after each beat of its own); the thread keeps their
 * leases while the worker cannot.
 */
export interface HeartbeatBackstop {
  /** Jobs just claimed (or handed over): kept from now on. */
  hold(ids: readonly string[]): void;
  /** The worker's own heartbeat went through, for exactly the jobs it held at `heldAt` (now(), when it began). */
  beat(ids: readonly string[], heldAt: number): void;
  /** Exactly the jobs the worker holds now, between beats: those it told of and finished since are forgotten. */
  held(ids: readonly string[]): void;
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

/** How long the thread outlives the last worker, its connections closed (about 90 ms of CPU saved at the next start). */
export const LINGER_MS = 30_000;

let thread: Thread | null = null;
/** Ends the thread after the last worker detached; cleared when one attaches again. */
let ending: NodeJS.Timeout | null = null;
const attached = new Set<Attached>();
const opened = new Set<string>();
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
  if (!opened.has(key)) {
    opened.add(key);
    send({ type: "open", key, spec });
  }
  const worker = ++lastWorker;
  const self: Attached = { key, worker, workerId, logger, onCancelled: params.onCancelled, reportedStall: false };
  attached.add(self);
  const at = now();
  send({ type: "beat", key, worker, workerId, leaseMs, ids: [], heldAt: at, at });
  return {
    hold(ids) {
      if (ids.length > 0) send({ type: "hold", key, worker, workerId, leaseMs, ids: [...ids], at: now() });
    },
    beat(ids, heldAt) {
      self.reportedStall = false;
      send({ type: "beat", key, worker, workerId, leaseMs, ids: [...ids], heldAt, at: now() });
    },
    held(ids) {
      send({ type: "held", key, worker, workerId, leaseMs, ids: [...ids], heldAt: now() });
    },
    detach() {
      if (!attached.delete(self)) return;
      send({ type: "forget", key, worker });
      if (attached.size === 0 && thread === current) {
        opened.clear();
        send({ type: "close" });
        ending = setTimeout(() => {
          ending = null;
          if (attached.size > 0 || thread !== current) return;
          thread = null;
          void current.terminate();
        }, LINGER_MS);
        ending.unref();
      }
    },
  };
}

function threadForProcess(): Thread {
  if (ending) {
    clearTimeout(ending);
    ending = null;
  }
  if (thread) return thread;
  const started = startThread(siblingModule(import.meta.url, "heartbeat-thread"), { name: "jfast heartbeat" });
  // The thread never keeps the process alive: a worker that stops detaches, and a process may exit without.
  started.unref();
  started.on("message", (message: FromHeartbeatThread) => receive(message));
  started.on("error", (error) => {
    for (const a of attached) a.logger.error("the heartbeat thread failed; leases are kept by the event loop alone", { error });
    if (thread === started) {
      thread = null;
      opened.clear();
    }
  });
  thread = started;
  return started;
}

function send(message: ToHeartbeatThread): void {
  thread?.postMessage(message);
}

function receive(message: FromHeartbeatThread): void {
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
