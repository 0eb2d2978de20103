import type { PausedTaskSet } from "../core/pause.js";
import type { QueueBackend, SlotOffer } from "../core/queue-backend.js";

/**
 * An idle worker's wait: the backend's wake-up (LISTEN/NOTIFY, blocking pop, consumer push) or `timeoutMs`, while
 * its free slots are offered to jobs enqueued in this process. Ends early when `wait` or `loopAbort` is aborted.
 */
export async function waitForWork(params: {
  backend: QueueBackend;
  offer: SlotOffer;
  loopAbort: AbortSignal;
  wait: AbortController;
  timeoutMs: number;
  paused: PausedTaskSet | undefined;
}): Promise<void> {
  const { backend, loopAbort, wait } = params;
  const stop = () => wait.abort();
  loopAbort.addEventListener("abort", stop, { once: true });
  const withdraw = backend.capabilities.handOff ? backend.offerSlots(params.offer) : undefined;
  try {
    if (loopAbort.aborted) return;
    await backend.waitForWork({ signal: wait.signal, timeoutMs: params.timeoutMs, pausedTasks: params.paused?.names() ?? [] });
  } finally {
    withdraw?.();
    loopAbort.removeEventListener("abort", stop);
  }
}
